/**
 * Stored guardrails (POST /v1/guardrails and friends), behind a port. A guardrail has a stable `id`
 * (UUID) and `slug` (unique within its scope) and one or more versions, each with its own
 * `version_id`; an update adds a version and keeps the old ones addressable. Every read and write
 * is scoped: a caller bound to a workspace (or an organisation) sees only that scope's guardrails.
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
export interface GuardrailScope {
  workspace_id?: string;
  organisation_id?: string;
}

/** One version of a guardrail, as answered by GET. */
export interface GuardrailRecord extends GuardrailScope {
  id: string;
  slug: string;
  version_id: string;
  name: string;
  checks: GuardrailCheck[];
  actions: GuardrailActions;
  /** When the guardrail (its first version) was created, ISO 8601. */
  created_at: string;
  /** When this version was written, ISO 8601. */
  last_updated_at: string;
}

/** What a create stores: the scope must name a workspace or an organisation. */
export interface GuardrailDraft extends GuardrailScope {
  name: string;
  checks: GuardrailCheck[];
  actions: GuardrailActions;
}

/** What an update replaces (the scope, id and slug stay). */
export interface GuardrailChange {
  name: string;
  checks: GuardrailCheck[];
  actions: GuardrailActions;
}

export interface GuardrailListQuery {
  /** Only guardrails of this workspace (within what the caller may see). */
  workspace_id?: string;
  organisation_id?: string;
  /** 0 answers no items, only the total. */
  page_size: number;
  /** 0-based; a page past the end answers no items. */
  current_page: number;
}

export interface GuardrailPage {
  object: 'list';
  data: GuardrailRecord[];
  total: number;
}

export interface GuardrailStoreOptions {
  /** Clock in ms for created_at / last_updated_at (tests inject one). */
  now?: () => number;
}

export interface GuardrailStore {
  readonly kind: 'memory' | 'redis';
  /** Stores the first version; the slug comes from the name, de-duplicated within the scope (`name-2`, ...). */
  create(draft: GuardrailDraft): Promise<GuardrailRecord>;
  /** The latest version, or the version `versionId` of that guardrail; undefined when not visible to `scope`. */
  get(idOrSlug: string, scope: GuardrailScope, versionId?: string): Promise<GuardrailRecord | undefined>;
  /** Latest versions visible to `scope`, oldest guardrail first. */
  list(scope: GuardrailScope, query: GuardrailListQuery): Promise<GuardrailPage>;
  /** Adds a version (a new version_id) and makes it the latest; undefined when not visible to `scope`. */
  update(idOrSlug: string, scope: GuardrailScope, change: GuardrailChange): Promise<GuardrailRecord | undefined>;
  /** Removes the guardrail and all its versions; answers its latest version, or undefined when not visible. */
  delete(idOrSlug: string, scope: GuardrailScope): Promise<GuardrailRecord | undefined>;
  /**
   * Synchronous, for the plan builder: no I/O (the Redis adapter answers from its mirror). Without a
   * scope, every guardrail is visible and a slug resolves only when exactly one scope has it.
   */
  lookup(idOrSlug: string, versionId?: string, scope?: GuardrailScope): GuardrailRecord | undefined;
  /** Changes on every write seen (local or, with Redis, another instance's): a plan cache key part. */
  generation(): number;
}

/** The scope a guardrail's slug is unique in: its workspace, else its organisation. */
export function scopeKey(s: GuardrailScope): string {
  if (s.workspace_id !== undefined) return `w:${s.workspace_id}`;
  if (s.organisation_id !== undefined) return `o:${s.organisation_id}`;
  return '-';
}

/** May a caller with scope `caller` see a guardrail living in `owner`? */
export function visibleTo(owner: GuardrailScope, caller: GuardrailScope | undefined): boolean {
  if (!caller) return true;
  if (caller.workspace_id !== undefined) return owner.workspace_id === caller.workspace_id;
  if (caller.organisation_id !== undefined) return owner.organisation_id === caller.organisation_id;
  return true;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const SLUG_MAX = 64;

/**
 * A URL-friendly slug from a name: lower case ASCII letters, digits and single dashes, accents
 * dropped, at most 60 characters (room for a `-n` suffix); `guardrail` when nothing is left. A slug
 * never looks like a UUID (ids are UUIDs and are looked up first).
 */
export function slugify(name: string): string {
  let s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX - 4)
    .replace(/-+$/, '');
  if (s === '') s = 'guardrail';
  if (UUID.test(s)) s = `g-${s}`.slice(0, SLUG_MAX - 4);
  return s;
}

/** The n-th candidate for a slug (1: the base itself, then `base-2`, `base-3`, ...). */
export function slugCandidate(base: string, n: number): string {
  return n === 1 ? base : `${base}-${n}`;
}

/** Candidates tried before a create gives up (the Redis script uses the same bound). */
export const SLUG_ATTEMPTS = 1000;
