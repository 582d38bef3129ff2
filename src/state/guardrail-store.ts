import type {
  ResourceDraft,
  ResourceKind,
  ResourceListQuery,
  ResourcePage,
  ResourceRecord,
  ResourceScope,
  ResourceStoreOptions,
  ScopedResourceStore,
} from './resource-store.js';

/**
 * Stored guardrails (POST /v1/guardrails and friends): a versioned, scoped resource
 * (resource-store.ts) whose content is a name, checks and actions.
 */
export interface GuardrailCheck {
  id: string;
  parameters: Record<string, unknown>;
}

export interface GuardrailActions {
  /** `block`: a failing check denies (446); `log`: results are recorded, the answer goes on (246). */
  onFail?: 'block' | 'log';
  /** Shown to the client when the guardrail blocks. */
  message?: string;
}

/** Who is asking, or where a guardrail lives. Empty: an unscoped (operator) caller that sees every scope. */
export type GuardrailScope = ResourceScope;

/** What an update replaces (the scope, id and slug stay): a guardrail version's content. */
export interface GuardrailChange {
  name: string;
  checks: GuardrailCheck[];
  actions: GuardrailActions;
}

/** One version of a guardrail, as answered by GET. */
export type GuardrailRecord = ResourceRecord<GuardrailChange>;
/** What a create stores: the scope must name a workspace or an organisation. */
export type GuardrailDraft = ResourceDraft<GuardrailChange>;
export type GuardrailListQuery = ResourceListQuery;
export type GuardrailPage = ResourcePage<GuardrailRecord>;
export type GuardrailStoreOptions = ResourceStoreOptions;
export type GuardrailStore = ScopedResourceStore<GuardrailChange>;

/** The guardrail kind: slug fallback `guardrail`, Redis keys under `gr:`. */
export const GUARDRAILS: ResourceKind<GuardrailChange> = {
  label: 'guardrail',
  key: 'gr',
  content: (c) => ({
    name: c.name,
    checks: c.checks.map((k) => ({ id: k.id, parameters: k.parameters })),
    actions: { ...c.actions },
  }),
};
