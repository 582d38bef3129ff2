/** What every management API shares: field errors, store writes, pages, and who manages what. */
import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { isAdmin, type ApiKeyRecord } from '../security/api-keys.js';
import { visibleTo, type RequestCaller } from '../security/tenancy.js';
import { memoByObject } from '../util/memo.js';

/** A 400 naming one field of the body (`invalid_request_body`) or one query parameter (`invalid_query_parameter`). */
export function fieldError(code: 'invalid_request_body' | 'invalid_query_parameter', field: string, message: string): GatewayError {
  const what = code === 'invalid_request_body' ? 'Invalid request body' : 'Invalid query';
  return new GatewayError(code, `${what}: ${field}: ${message}`, { param: field, issues: [{ path: [field], message }] });
}

export const PAGE_SIZE_DEFAULT = 50;
export const PAGE_SIZE_MAX = 100;

/** A workspace or organisation identifier in a body or a query (gateway keys name theirs freely). */
export const ScopeId = z.string().min(1, 'must not be empty').max(128, 'at most 128 characters');

/** The query of a route that takes none (an unknown parameter is a 400 naming it). */
export const NoQuery = z.strictObject({});

/** A list answer (`{object: "list", data, total}`). */
export interface Page<T> {
  object: 'list';
  data: T[];
  total: number;
}

/** One page of `items` (`page_size` 0 answers only the total; a page past the end is empty). */
export function page<T>(items: readonly T[], q: { page_size: number; current_page: number }): Page<T> {
  const start = q.current_page * q.page_size;
  return { object: 'list', data: items.slice(start, start + q.page_size), total: items.length };
}

/**
 * A list answer over records that carry their scope: those `scope` may see, narrowed by the query's
 * `workspace_id` / `organisation_id` (already checked with `withinScope`), paged, each shown by `view`.
 */
export function scopedPage<R extends Scope, V>(
  records: readonly R[],
  scope: Scope,
  q: Scope & { page_size: number; current_page: number },
  view: (r: R) => V,
): Page<V> {
  return page(scopedItems(records, scope, q).map(view), q);
}

/** The records `scope` may see, narrowed by the query's `workspace_id` / `organisation_id` (already checked with `withinScope`). */
export function scopedItems<R extends Scope>(records: readonly R[], scope: Scope, q: Scope): R[] {
  return records.filter(
    (r) => visibleTo(r, scope) && (q.workspace_id === undefined || r.workspace_id === q.workspace_id) && (q.organisation_id === undefined || r.organisation_id === q.organisation_id),
  );
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

/**
 * The scope a gateway key is bound to, for what a proxied request may use (its workspace's prompts),
 * and whether it is an admin key (security/tenancy.ts `usableBy`: an unbound admin key may use any
 * tenant's). Management routes use `managementScope`. Made once per key record.
 */
export function callerScope(key: ApiKeyRecord | undefined): RequestCaller {
  return key === undefined ? NO_KEY : scopeOfKey(key);
}

const NO_KEY: RequestCaller = Object.freeze({});

const scopeOfKey = memoByObject((key: ApiKeyRecord): RequestCaller => {
  const s: { workspace_id?: string; organisation_id?: string; scopes?: readonly string[] } = {};
  if (key.workspace_id !== undefined) s.workspace_id = key.workspace_id;
  if (key.organisation_id !== undefined) s.organisation_id = key.organisation_id;
  if (key.scopes !== undefined) s.scopes = key.scopes;
  return s;
});

/** A 403 `forbidden_scope` naming what the key may not reach. */
export function forbidden(message: string, param: string | null = null): GatewayError {
  return new GatewayError('forbidden_scope', message, { param });
}

/**
 * What the caller's gateway key may manage and read (the scope the stores filter by). An admin key
 * (`scopes: [admin]`) manages every workspace, or, when it is bound to an organisation, every
 * workspace of that organisation; any other key manages its own workspace only. A key that is neither
 * admin nor bound to a workspace manages nothing: 403 `forbidden_scope`.
 */
export function managementScope(key: ApiKeyRecord | undefined): Scope {
  if (isAdmin(key)) return key!.organisation_id === undefined ? {} : { organisation_id: key!.organisation_id };
  if (key?.workspace_id === undefined) {
    throw forbidden(
      'This gateway key is bound to no workspace and has no admin scope, so it manages nothing; use a key with a workspace_id, or one with scopes: [admin].',
      'x-gateway-api-key',
    );
  }
  return defined({ workspace_id: key.workspace_id, organisation_id: key.organisation_id });
}

/** The admin routes (`/v1/api-keys`): the caller's scope, or 403 for a key without `admin`. */
export function adminScope(key: ApiKeyRecord | undefined): Scope {
  if (!isAdmin(key)) throw forbidden('This route needs a gateway key with scopes: [admin].', 'x-gateway-api-key');
  return managementScope(key);
}

/** An update may name its resource's scope but not move it: a 400 naming the field that differs. */
export function keepScope(named: Scope, current: { workspace_id?: string | null; organisation_id?: string | null }, label: string): void {
  for (const f of ['workspace_id', 'organisation_id'] as const) {
    if (named[f] !== undefined && named[f] !== current[f]) {
      throw fieldError('invalid_request_body', f, `${label} cannot move to another scope; omit it or give its current value`);
    }
  }
}

/**
 * 403 when a body or a query names a workspace or organisation outside the caller's scope: for a
 * workspace key, another workspace or another organisation than its own (any, when it has none); for
 * an organisation-bound admin key, another organisation.
 */
export function withinScope(asked: Scope, scope: Scope): void {
  const fields =
    scope.workspace_id !== undefined ? (['workspace_id', 'organisation_id'] as const) : scope.organisation_id !== undefined ? (['organisation_id'] as const) : [];
  for (const f of fields) {
    if (asked[f] === undefined || asked[f] === scope[f]) continue;
    const what = f === 'workspace_id' ? 'workspace' : 'organisation';
    throw forbidden(
      scope[f] === undefined
        ? `This gateway key belongs to no ${what}, so it cannot name ${f} "${asked[f]}".`
        : `This gateway key manages its own ${what} "${scope[f]}" only, not "${asked[f]}".`,
      f,
    );
  }
}

/**
 * Where a new resource lives: the caller's workspace, or (an admin key) the workspace the body names,
 * within the admin's organisation when it is bound to one. An unbound admin key must name a workspace
 * or an organisation; a body naming a scope outside the caller's is a 403. Absent fields are left out.
 */
export function ownerScope(body: Scope, caller: Scope): Scope {
  withinScope(body, caller);
  if (caller.workspace_id === undefined && caller.organisation_id === undefined) {
    if (body.workspace_id === undefined && body.organisation_id === undefined) {
      throw fieldError('invalid_request_body', 'workspace_id', 'workspace_id or organisation_id is required: this admin key is not bound to a workspace or organisation');
    }
    return defined({ workspace_id: body.workspace_id, organisation_id: body.organisation_id });
  }
  return defined({ workspace_id: caller.workspace_id ?? body.workspace_id, organisation_id: caller.organisation_id });
}

function defined(s: Scope): Scope {
  const out: Scope = {};
  if (s.workspace_id !== undefined) out.workspace_id = s.workspace_id;
  if (s.organisation_id !== undefined) out.organisation_id = s.organisation_id;
  return out;
}
