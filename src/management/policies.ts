import { z } from 'zod';
import { parseOrThrow } from '../config/issues.js';
import { declaredId, POLICY_STATUSES, POLICY_TYPES, UsageLimitBodySchema, type UsageLimitBody, type UsageLimitEntry } from '../config/usage-limits.js';
import { fieldError, keepScope, managementScope, NoQuery, ownerScope, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, storeWrite, withinScope } from './common.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import type { DeclaredPolicy, PolicyDefinition, PolicyPage, PolicyScope, PolicyStore, UsageLimitPolicy } from '../state/policy-store.js';
import { fromUnits, type UsageCounters } from '../state/usage-counters.js';

const count = z
  .string()
  .regex(/^\d{1,9}$/, 'must be a non-negative integer')
  .transform(Number);

/** GET /v1/policies/usage-limits (filters: workspace id or slug, status, type, page size ≥ 0, current page). */
export const PolicyListQuerySchema = z.strictObject({
  workspace_id: z.string().min(1, 'must not be empty').max(128, 'at most 128 characters').optional(),
  status: z.enum(POLICY_STATUSES).optional(),
  type: z.enum(POLICY_TYPES).optional(),
  page_size: count.pipe(z.number().max(PAGE_SIZE_MAX, `at most ${PAGE_SIZE_MAX}`)).default(PAGE_SIZE_DEFAULT),
  current_page: count.default(0),
});



function notFound(id: string): GatewayError {
  return new GatewayError('policy_not_found', `No usage-limit policy has the id "${id}".`);
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
 * by the caller's gateway key as the guardrails API does (common.ts `managementScope`: a workspace key
 * creates in and sees only its workspace, another workspace's policy is a 404 as an unknown one, and
 * naming another workspace is a 403), and the answers. No HTTP types.
 * Every policy answered carries its `value_key_usage_map`: each group's usage in the current period,
 * read from the usage counters (src/limits/ enforces the policies).
 */
export class PoliciesService {
  constructor(
    private readonly store: PolicyStore,
    private readonly counters: UsageCounters,
    private readonly now: () => number = Date.now,
  ) {}

  async create(body: unknown, key: ApiKeyRecord | undefined): Promise<UsageLimitPolicy> {
    const scope = managementScope(key);
    const b = parseOrThrow(UsageLimitBodySchema, body, 'invalid_request_body', 'request body');
    const owner = policyOwner(b, scope);
    return this.withUsage(await storeWrite(() => this.store.create({ ...definition(b, b.status ?? 'active'), ...owner })));
  }

  async list(query: unknown, key: ApiKeyRecord | undefined): Promise<PolicyPage> {
    const scope = managementScope(key);
    const q = parseOrThrow(PolicyListQuerySchema, query, 'invalid_query_parameter', 'query');
    withinScope(q, scope);
    const page = await storeWrite(() => this.store.list(scope, q));
    await Promise.all(page.data.map((p) => this.withUsage(p)));
    return page;
  }

  async get(id: string, query: unknown, key: ApiKeyRecord | undefined): Promise<UsageLimitPolicy> {
    const scope = managementScope(key);
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const p = await storeWrite(() => this.store.get(id, scope));
    if (!p) throw notFound(id);
    return this.withUsage(p);
  }

  /** `p` with each group's usage in the current period (in the policy's unit: tokens, or USD). */
  private async withUsage(p: UsageLimitPolicy): Promise<UsageLimitPolicy> {
    const units = await storeWrite(() => this.counters.usage({ policyId: p.id, type: p.type, reset: p.periodic_reset }, this.now()));
    p.value_key_usage_map = Object.fromEntries(Object.entries(units).map(([g, u]) => [g, fromUnits(p.type, u)]));
    return p;
  }

  /**
   * PUT: the whole definition again. The scope cannot move and the type cannot change (the usage
   * counted so far is in the old type's unit): when given, they must be the current ones. `status`
   * absent keeps the current one.
   */
  async update(id: string, body: unknown, query: unknown, key: ApiKeyRecord | undefined): Promise<UsageLimitPolicy> {
    const scope = managementScope(key);
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const b = parseOrThrow(UsageLimitBodySchema, body, 'invalid_request_body', 'request body');
    withinScope(b, scope);
    const current = await storeWrite(() => this.store.get(id, scope));
    if (!current) throw notFound(id);
    keepScope(b, current, 'a policy');
    if (b.type !== current.type) throw fieldError('invalid_request_body', 'type', `a policy's type cannot change (it is "${current.type}"); archive it and create another`);
    const p = await storeWrite(() => this.store.update(current.id, scope, definition(b, b.status ?? current.status)));
    if (!p) throw notFound(id);
    return this.withUsage(p);
  }

  /** DELETE archives (status → archived) and answers the policy; archiving again changes nothing. */
  async delete(id: string, query: unknown, key: ApiKeyRecord | undefined): Promise<UsageLimitPolicy> {
    const scope = managementScope(key);
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const p = await storeWrite(() => this.store.archive(id, scope));
    if (!p) throw notFound(id);
    return this.withUsage(p);
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

/** Where a new policy lives (common.ts `ownerScope`), with the record's nulls for an absent field. */
function policyOwner(b: UsageLimitBody, caller: PolicyScope): { workspace_id: string | null; organisation_id: string | null } {
  const s = ownerScope(b, caller);
  return { workspace_id: s.workspace_id ?? null, organisation_id: s.organisation_id ?? null };
}
