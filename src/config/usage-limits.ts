import { z } from 'zod';
import { nameBasedUuid } from '../util/name-uuid.js';

/**
 * The usage-limit policy's writable fields (docs/usage-limits.md), one schema for the API's
 * POST/PUT bodies and the bootstrap file's `usage_limits` entries. Strict: an unknown field (also
 * `value_key_usage_map`, which only the gateway writes) is a 400 naming it.
 */

export const POLICY_TYPES = ['cost', 'tokens'] as const;
export const POLICY_STATUSES = ['active', 'archived'] as const;
export const PERIODIC_RESETS = ['monthly', 'weekly', 'daily'] as const;

/** Request attributes a condition may test, besides `metadata.<key>`. */
export const CONDITION_KEYS = ['api_key', 'workspace_id', 'provider', 'model'] as const;
/** Request attributes usage may be grouped by, besides `metadata.<key>` (e.g. `metadata._user`). */
export const GROUP_BY_KEYS = ['api_key', 'workspace_id', 'provider', 'model'] as const;

export const MAX_CONDITIONS = 20;
export const MAX_GROUP_BY = 5;
/** Metadata keys are at most 64 characters (the gateway's metadata limits). */
const METADATA_KEY = /^metadata\.[^\s]{1,64}$/;

function attributeKey(fixed: readonly string[]) {
  const list = [...fixed, 'metadata.<key>'].join(', ');
  return z.string().refine((k) => fixed.includes(k) || METADATA_KEY.test(k), { message: `unknown key; use one of ${list}` });
}

const scopeId = z.string().min(1, 'must not be empty').max(128, 'at most 128 characters');

const Condition = z.strictObject({
  key: attributeKey(CONDITION_KEYS),
  value: z.string().min(1, 'must not be empty').max(512, 'at most 512 characters'),
});

const GroupBy = z.strictObject({ key: attributeKey(GROUP_BY_KEYS) });

/** Each key at most once: two conditions on one key could never both match; a repeated group adds nothing. */
function uniqueKeys(list: readonly { key: string }[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  list.forEach((item, i) => {
    if (seen.has(item.key)) ctx.addIssue({ code: 'custom', path: [i, 'key'], message: `"${item.key}" is given twice` });
    seen.add(item.key);
  });
}

const positive = z.number().finite().positive('must be greater than 0');

const FIELDS = {
  name: z.string().min(1, 'must not be empty').max(256, 'at most 256 characters'),
  type: z.enum(POLICY_TYPES),
  /** Absent: `active` on create, unchanged on PUT (where `active` restarts an archived policy). */
  status: z.enum(POLICY_STATUSES).optional(),
  conditions: z.array(Condition).max(MAX_CONDITIONS, `at most ${MAX_CONDITIONS}`).superRefine(uniqueKeys).default([]),
  group_by: z.array(GroupBy).max(MAX_GROUP_BY, `at most ${MAX_GROUP_BY}`).superRefine(uniqueKeys).default([]),
  credit_limit: positive,
  alert_threshold: positive.nullable().optional(),
  periodic_reset: z.enum(PERIODIC_RESETS).nullable().optional(),
  workspace_id: scopeId.optional(),
  organisation_id: scopeId.optional(),
};

function limits(b: { type: string; credit_limit: number; alert_threshold?: number | null | undefined }, ctx: z.RefinementCtx): void {
  if (b.type === 'tokens' && !Number.isInteger(b.credit_limit)) {
    ctx.addIssue({ code: 'custom', path: ['credit_limit'], message: 'a tokens limit is a whole number of tokens' });
  }
  if (b.alert_threshold != null && b.alert_threshold > b.credit_limit) {
    ctx.addIssue({ code: 'custom', path: ['alert_threshold'], message: 'must not exceed credit_limit' });
  }
}

export const UsageLimitBodySchema = z.strictObject(FIELDS).superRefine(limits);
export type UsageLimitBody = z.infer<typeof UsageLimitBodySchema>;

/** A bootstrap entry: the same body, plus an optional fixed `id` (else one derived from its scope and name). */
export const UsageLimitEntrySchema = z.strictObject({ id: z.uuid('must be a UUID').optional(), ...FIELDS }).superRefine(limits);
export type UsageLimitEntry = z.infer<typeof UsageLimitEntrySchema>;

/**
 * The id of a bootstrap entry: its `id`, else a UUID (version 8, name-based) derived from its scope
 * and name, so that declaring the same file again at every start finds the same policy.
 */
export function declaredId(e: Pick<UsageLimitEntry, 'id' | 'name' | 'workspace_id' | 'organisation_id'>): string {
  if (e.id !== undefined) return e.id.toLowerCase();
  return nameBasedUuid('usage-limit', e.organisation_id ?? '', e.workspace_id ?? '', e.name);
}
