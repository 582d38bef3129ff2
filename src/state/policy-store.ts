/**
 * Usage-limit policies (docs/usage-limits.md; GET/POST/PUT/DELETE /v1/policies/usage-limits),
 * behind a port. A policy is never removed: DELETE archives it (status → archived). Reads and writes
 * are scoped as guardrails are: a caller bound to a workspace (or an organisation) sees only that
 * scope's policies. Enforcement (src/limits/policy-index.ts) reads the active policies
 * synchronously (`active()`, from memory: with Redis a mirror kept current by pub/sub) and re-indexes
 * them when `generation()` moves. The usage itself is not here: it lives in the usage counters
 * (usage-counters.ts), and the management API fills `value_key_usage_map` from them.
 */
import { isUuid } from '../util/name-uuid.js';
import { visibleTo, type ResourceScope } from './resource-store.js';

export type PolicyType = 'cost' | 'tokens';
export type PolicyStatus = 'active' | 'archived';
export type PeriodicReset = 'monthly' | 'weekly' | 'daily';

/** Who is asking (empty: an operator caller that sees every scope); the same rule as guardrails. */
export type PolicyScope = ResourceScope;

export interface PolicyCondition {
  key: string;
  value: string;
}

export interface PolicyGroupBy {
  key: string;
}

/** The definition a create or update writes (everything but identity, scope, timestamps and usage). */
export interface PolicyDefinition {
  name: string;
  type: PolicyType;
  status: PolicyStatus;
  conditions: PolicyCondition[];
  group_by: PolicyGroupBy[];
  credit_limit: number;
  /** Absolute, in the policy's unit; null: no alert. */
  alert_threshold: number | null;
  /** null: the period never ends. */
  periodic_reset: PeriodicReset | null;
}

/** A policy as the API answers it: every field, always present. */
export interface UsageLimitPolicy extends PolicyDefinition {
  id: string;
  /** null for an organisation-wide policy. */
  workspace_id: string | null;
  /** null when the policy's workspace key names no organisation. */
  organisation_id: string | null;
  created_at: string;
  last_updated_at: string;
  /**
   * Group value (`""` without group_by) → usage in the current period, in the policy's unit. The
   * store answers `{}`; the management API fills it from the usage counters.
   */
  value_key_usage_map: Record<string, number>;
}

/** What a create stores: a definition and a scope naming a workspace or an organisation. */
export interface PolicyDraft extends PolicyDefinition {
  workspace_id: string | null;
  organisation_id: string | null;
}

/** A bootstrap-declared policy: a draft with its fixed id. */
export interface DeclaredPolicy extends PolicyDraft {
  id: string;
}

export interface PolicyListQuery {
  workspace_id?: string;
  status?: PolicyStatus;
  type?: PolicyType;
  /** 0 answers no items, only the total. */
  page_size: number;
  /** 0-based; a page past the end answers no items. */
  current_page: number;
}

export interface PolicyPage {
  object: 'list';
  data: UsageLimitPolicy[];
  /** Every policy that matches the filters, over all pages. */
  total: number;
}

export interface PolicyStoreOptions {
  /** Clock in ms for created_at / last_updated_at (tests inject one). */
  now?: () => number;
}

export interface PolicyStore {
  readonly kind: 'memory' | 'redis';
  create(draft: PolicyDraft): Promise<UsageLimitPolicy>;
  /** undefined when unknown or not visible to `scope`. */
  get(id: string, scope: PolicyScope): Promise<UsageLimitPolicy | undefined>;
  /** Visible policies matching the filters, oldest first. */
  list(scope: PolicyScope, query: PolicyListQuery): Promise<PolicyPage>;
  /** Replaces the definition (id, scope, created_at and usage stay); undefined when not visible. */
  update(id: string, scope: PolicyScope, change: PolicyDefinition): Promise<UsageLimitPolicy | undefined>;
  /** Sets status archived (already archived: unchanged); undefined when not visible. */
  archive(id: string, scope: PolicyScope): Promise<UsageLimitPolicy | undefined>;
  /**
   * Creates the policy with its given id, or, when it exists, makes its definition and scope the
   * declared ones (the usage map is kept unless the type changes; `last_updated_at` moves only when
   * something changed). For bootstrap files, loaded at every start.
   */
  declare(policy: DeclaredPolicy): Promise<UsageLimitPolicy>;
  /**
   * The active policies of every scope, synchronously, from memory (with Redis: a local mirror,
   * loaded at connect and kept current by pub/sub, so another instance's write shows in
   * milliseconds). Not copies: callers must not change them.
   */
  active(): readonly UsageLimitPolicy[];
  /** Moves whenever `active()` may answer something else (a write here, or one seen from another instance). */
  generation(): number;
}

/** May `caller` see `p`? (guardrails' rule over the policy's nullable scope). */
export function policyVisible(p: Pick<UsageLimitPolicy, 'workspace_id' | 'organisation_id'>, caller: PolicyScope): boolean {
  const owner: PolicyScope = {};
  if (p.workspace_id !== null) owner.workspace_id = p.workspace_id;
  if (p.organisation_id !== null) owner.organisation_id = p.organisation_id;
  return visibleTo(owner, caller);
}

/** Does `p` pass the list's filters? */
export function policyMatches(p: UsageLimitPolicy, q: PolicyListQuery): boolean {
  return (
    (q.workspace_id === undefined || p.workspace_id === q.workspace_id) &&
    (q.status === undefined || p.status === q.status) &&
    (q.type === undefined || p.type === q.type)
  );
}

/** The page of `matching` (already in list order) that the query asks for. */
export function pageOf(matching: UsageLimitPolicy[], q: PolicyListQuery): PolicyPage {
  const start = q.current_page * q.page_size;
  return { object: 'list', data: matching.slice(start, start + q.page_size), total: matching.length };
}

/** The definition part of a record or draft (for comparing and copying). */
export function definitionOf(p: PolicyDefinition): PolicyDefinition {
  return {
    name: p.name,
    type: p.type,
    status: p.status,
    conditions: p.conditions.map((c) => ({ key: c.key, value: c.value })),
    group_by: p.group_by.map((g) => ({ key: g.key })),
    credit_limit: p.credit_limit,
    alert_threshold: p.alert_threshold,
    periodic_reset: p.periodic_reset,
  };
}

/**
 * What `declare` makes of an existing policy: undefined when nothing changes, else the record with
 * the declared definition and scope, stamped `at`. (Counters are kept per type: a policy whose type
 * changes counts from zero in its new unit.)
 */
export function redeclared(current: UsageLimitPolicy, d: DeclaredPolicy, at: string): UsageLimitPolicy | undefined {
  const next: UsageLimitPolicy = {
    ...current,
    ...definitionOf(d),
    workspace_id: d.workspace_id,
    organisation_id: d.organisation_id,
  };
  if (JSON.stringify(next) === JSON.stringify(current)) return undefined;
  return { ...next, last_updated_at: at };
}

/** Policy ids are UUIDs: anything else is unknown without a look (and never reaches a Redis key). */
export const isPolicyId = isUuid;

/** A new policy's record, its fields in the documented order, the usage map empty. */
export function newPolicy(id: string, d: PolicyDraft, at: string): UsageLimitPolicy {
  const def = definitionOf(d);
  return {
    id,
    type: def.type,
    status: def.status,
    workspace_id: d.workspace_id,
    organisation_id: d.organisation_id,
    created_at: at,
    last_updated_at: at,
    name: def.name,
    conditions: def.conditions,
    group_by: def.group_by,
    credit_limit: def.credit_limit,
    alert_threshold: def.alert_threshold,
    periodic_reset: def.periodic_reset,
    value_key_usage_map: {},
  };
}

/** `current` with the definition `change`, stamped `at` (id, scope, created_at and usage kept). */
export function changed(current: UsageLimitPolicy, change: PolicyDefinition, at: string): UsageLimitPolicy {
  return { ...current, ...definitionOf(change), last_updated_at: at };
}
