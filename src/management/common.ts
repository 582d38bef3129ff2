/** What every management API shares: field errors, store writes, who is asking and where a new resource lives. */
import { GatewayError } from '../errors/gateway-error.js';
import type { ApiKeyRecord } from '../security/api-keys.js';

export const PAGE_SIZE_DEFAULT = 50;
export const PAGE_SIZE_MAX = 100;

/** A 400 naming one field of the body (`invalid_request_body`) or one query parameter (`invalid_query_parameter`). */
export function fieldError(code: 'invalid_request_body' | 'invalid_query_parameter', field: string, message: string): GatewayError {
  const what = code === 'invalid_request_body' ? 'Invalid request body' : 'Invalid query';
  return new GatewayError(code, `${what}: ${field}: ${message}`, { param: field, issues: [{ path: [field], message }] });
}

/** A write the store could not make (Redis unreachable) is a 503 the client may retry, not a 500. */
export async function storeWrite<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof GatewayError) throw e;
    throw new GatewayError('store_unavailable', undefined, { cause: e });
  }
}

export interface Scope {
  workspace_id?: string | undefined;
  organisation_id?: string | undefined;
}

/** The scope a gateway key is bound to (empty: an operator key that sees every scope). */
export function callerScope(key: ApiKeyRecord | undefined): { workspace_id?: string; organisation_id?: string } {
  const s: { workspace_id?: string; organisation_id?: string } = {};
  if (key?.workspace_id !== undefined) s.workspace_id = key.workspace_id;
  if (key?.organisation_id !== undefined) s.organisation_id = key.organisation_id;
  return s;
}

/**
 * Where a new resource lives: the caller's gateway key's scope, or (an operator key, bound to
 * neither) the scope the body names, which it must. An organisation key may place it in a workspace;
 * no key may place it outside its own workspace or organisation. Absent fields are left out.
 */
export function ownerScope(body: Scope, caller: Scope): Scope {
  if (caller.workspace_id === undefined && caller.organisation_id === undefined) {
    if (body.workspace_id === undefined && body.organisation_id === undefined) {
      throw fieldError('invalid_request_body', 'workspace_id', 'workspace_id or organisation_id is required: this gateway key is not bound to a workspace or organisation');
    }
    return defined({ workspace_id: body.workspace_id, organisation_id: body.organisation_id });
  }
  const check = (f: 'workspace_id' | 'organisation_id', what: string): void => {
    if (body[f] !== undefined && body[f] !== caller[f]) {
      throw fieldError('invalid_request_body', f, `this gateway key is bound to its own ${what}; omit ${f} or give that one`);
    }
  };
  check('organisation_id', 'organisation');
  if (caller.workspace_id !== undefined) check('workspace_id', 'workspace');
  return defined({ workspace_id: caller.workspace_id ?? body.workspace_id, organisation_id: caller.organisation_id });
}

function defined(s: Scope): Scope {
  const out: Scope = {};
  if (s.workspace_id !== undefined) out.workspace_id = s.workspace_id;
  if (s.organisation_id !== undefined) out.organisation_id = s.organisation_id;
  return out;
}
