import { z } from 'zod';
import { parseOrThrow } from '../config/issues.js';
import { declaredId, POLICY_STATUSES, POLICY_TYPES, UsageLimitBodySchema, type UsageLimitBody, type UsageLimitEntry } from '../config/usage-limits.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import type { DeclaredPolicy, PolicyDefinition, PolicyPage, PolicyScope, PolicyStore, UsageLimitPolicy } from '../state/policy-store.js';
import { callerScope, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from './guardrails.js';

const count = z
  .string()
  .regex(/^\d{1,9}$/, 'must be a non-negative integer')
  .transform(Number);

/** GET /v1/policies/usage-limits (spec: workspace id or slug, status, type, page size ≥ 0, current page). */
export const PolicyListQuerySchema = z.strictObject({
  workspace_id: z.string().min(1, 'must not be empty').max(128, 'at most 128 characters').optional(),
  status: z.enum(POLICY_STATUSES).optional(),
  type: z.enum(POLICY_TYPES).optional(),
  page_size: count.pipe(z.number().max(PAGE_SIZE_MAX, `at most ${PAGE_SIZE_MAX}`)).default(PAGE_SIZE_DEFAULT),
  current_page: count.default(0),
});

const NoQuery = z.strictObject({});

type ScopeField = 'workspace_id' | 'organisation_id';

function notFound(id: string): GatewayError {
  return new GatewayError('policy_not_found', `No usage-limit policy has the id "${id}".`);
}

function badField(field: string, message: string): GatewayError {
  return new GatewayError('invalid_request_body', `Invalid request body: ${field}: ${message}`, {
    param: field,
    issues: [{ path: [field], message }],
  });
}

/** A write the store could not make (Redis unreachable) is a 503 the client may retry, not a 500. */
async function write<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof GatewayError) throw e;
    throw new GatewayError('store_unavailable', undefined, { cause: e });
  }
}

function definition(b: UsageLimitBody, status: UsageLimitPolicy['status']): PolicyDefinition {
  return {
    name: b.name,
    type: b.type,
    status,
    conditions: b.conditions,
    group_by: b.group_by,
    credit_limit: b.credit_limit,
    alert_threshold: b.alert_threshold ?? null,
    periodic_reset: b.periodic_reset ?? null,
  };
}

/**
 * The usage-limits API's logic, over the store port: zod validation of bodies and queries, scoping
 * by the caller's gateway key as the guardrails API does (a workspace key creates in and sees only
 * its workspace; another scope's policy is a 404, as an unknown one), and the answers. No HTTP types.
 * Policies are stored and listed only: no request is limited by them yet (README "Usage limits").
 */
export class PoliciesService {
  constructor(private readonly store: PolicyStore) {}

  async create(body: unknown, key: ApiKeyRecord | undefined): Promise<UsageLimitPolicy> {
    const b = parseOrThrow(UsageLimitBodySchema, body, 'invalid_request_body', 'request body');
    const owner = ownerScope(b, callerScope(key));
    return write(() => this.store.create({ ...definition(b, b.status ?? 'active'), ...owner }));
  }

  async list(query: unknown, key: ApiKeyRecord | undefined): Promise<PolicyPage> {
    const q = parseOrThrow(PolicyListQuerySchema, query, 'invalid_query_parameter', 'query');
    return write(() => this.store.list(callerScope(key), q));
  }

  async get(id: string, query: unknown, key: ApiKeyRecord | undefined): Promise<UsageLimitPolicy> {
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const p = await write(() => this.store.get(id, callerScope(key)));
    if (!p) throw notFound(id);
    return p;
  }

  /**
   * PUT: the whole definition again. The scope cannot move and the type cannot change (the usage
   * counted so far is in the old type's unit): when given, they must be the current ones. `status`
   * absent keeps the current one.
   */
  async update(id: string, body: unknown, query: unknown, key: ApiKeyRecord | undefined): Promise<UsageLimitPolicy> {
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const b = parseOrThrow(UsageLimitBodySchema, body, 'invalid_request_body', 'request body');
    const scope = callerScope(key);
    const current = await write(() => this.store.get(id, scope));
    if (!current) throw notFound(id);
    for (const f of ['workspace_id', 'organisation_id'] as const) {
      if (b[f] !== undefined && b[f] !== current[f]) throw badField(f, 'a policy cannot move to another scope; omit it or give its current value');
    }
    if (b.type !== current.type) throw badField('type', `a policy's type cannot change (it is "${current.type}"); archive it and create another`);
    const p = await write(() => this.store.update(current.id, scope, definition(b, b.status ?? current.status)));
    if (!p) throw notFound(id);
    return p;
  }

  /** DELETE archives (status → archived) and answers the policy; archiving again changes nothing. */
  async delete(id: string, query: unknown, key: ApiKeyRecord | undefined): Promise<UsageLimitPolicy> {
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const p = await write(() => this.store.archive(id, callerScope(key)));
    if (!p) throw notFound(id);
    return p;
  }

  /** Stores the bootstrap file's policies (validated at parse time); answers how many. */
  async declare(entries: readonly UsageLimitEntry[]): Promise<number> {
    for (const e of entries) await this.store.declare(declared(e));
    return entries.length;
  }
}

/** A bootstrap entry as the store's declaration (its scope is named in the file). */
export function declared(e: UsageLimitEntry): DeclaredPolicy {
  return {
    id: declaredId(e),
    ...definition(e, e.status ?? 'active'),
    workspace_id: e.workspace_id ?? null,
    organisation_id: e.organisation_id ?? null,
  };
}

/** Where a new policy lives: the key's scope, or (operator key) the scope the body names. */
function ownerScope(b: UsageLimitBody, caller: PolicyScope): { workspace_id: string | null; organisation_id: string | null } {
  if (caller.workspace_id === undefined && caller.organisation_id === undefined) {
    if (b.workspace_id === undefined && b.organisation_id === undefined) {
      throw badField('workspace_id', 'workspace_id or organisation_id is required: this gateway key is not bound to a workspace or organisation');
    }
    return { workspace_id: b.workspace_id ?? null, organisation_id: b.organisation_id ?? null };
  }
  const check = (f: ScopeField, what: string) => {
    if (b[f] !== undefined && b[f] !== caller[f]) throw badField(f, `this gateway key is bound to its own ${what}; omit ${f} or give that one`);
  };
  check('organisation_id', 'organisation');
  // an organisation key may place a policy in a workspace; a workspace key only in its own
  if (caller.workspace_id !== undefined) check('workspace_id', 'workspace');
  return { workspace_id: caller.workspace_id ?? b.workspace_id ?? null, organisation_id: caller.organisation_id ?? null };
}
