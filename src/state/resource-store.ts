/**
 * Versioned, scoped management resources (stored guardrails, prompt templates), behind one port. A
 * resource has a stable `id` (UUID) and `slug` (unique within its scope) and one or more versions,
 * each with its own `version_id`; an update adds a version and keeps the old ones addressable. Every
 * read and write is scoped: a caller bound to a workspace (or an organisation) sees only that
 * scope's resources. What differs between kinds is only their content (`ResourceKind`).
 */
import { tenantKey } from '../security/tenancy.js';
import { isUuid } from '../util/name-uuid.js';

export { usableBy, visibleTo } from '../security/tenancy.js';

/** Who is asking, or where a resource lives. Empty: an unscoped (operator) caller that sees every scope. */
export interface ResourceScope {
  workspace_id?: string;
  organisation_id?: string;
}

/** The fields every version of every kind carries besides its content. */
export interface ResourceMeta extends ResourceScope {
  id: string;
  slug: string;
  version_id: string;
  /** When the resource (its first version) was created, ISO 8601. */
  created_at: string;
  /** When this version was written, ISO 8601. */
  last_updated_at: string;
}

/** One version of a resource whose content is `C`, as answered by GET. */
export type ResourceRecord<C> = ResourceMeta & C;

/** What a create stores: the content and a scope, which must name a workspace or an organisation. */
export type ResourceDraft<C> = C & ResourceScope;

/** A kind of resource: its name and how a version's content is copied out of a change. */
export interface ResourceKind<C extends { name: string }> {
  /** `guardrail`, `prompt`: the slug when a name leaves nothing, and the store's name in metrics. */
  readonly label: string;
  /** Redis key part (`gr`, `pr`). */
  readonly key: string;
  /** The content of a version, copied from a change (or from a record), so later edits of the caller's object never reach the store. */
  content(change: C): C;
}

export interface ResourceListQuery {
  /** Only resources of this workspace (within what the caller may see). */
  workspace_id?: string;
  organisation_id?: string;
  /** 0 answers no items, only the total. */
  page_size: number;
  /** 0-based; a page past the end answers no items. */
  current_page: number;
}

export interface ResourcePage<R> {
  object: 'list';
  data: R[];
  total: number;
}

export interface ResourceStoreOptions {
  /** Clock in ms for created_at / last_updated_at (tests inject one). */
  now?: () => number;
}

/** What a declaration (the bootstrap file, at every start) did. */
export type DeclareOutcome = 'created' | 'updated' | 'unchanged';

export interface ScopedResourceStore<C extends { name: string }> {
  readonly kind: 'memory' | 'redis';
  /** Stores the first version; the slug comes from the name, de-duplicated within the scope (`name-2`, ...). */
  create(draft: ResourceDraft<C>): Promise<ResourceRecord<C>>;
  /** The latest version, or the version `versionId` of that resource; undefined when not visible to `scope`. */
  get(idOrSlug: string, scope: ResourceScope, versionId?: string): Promise<ResourceRecord<C> | undefined>;
  /** Latest versions visible to `scope`, oldest resource first. */
  list(scope: ResourceScope, query: ResourceListQuery): Promise<ResourcePage<ResourceRecord<C>>>;
  /** Adds a version (a new version_id) and makes it the latest; undefined when not visible to `scope`. */
  update(idOrSlug: string, scope: ResourceScope, change: C): Promise<ResourceRecord<C> | undefined>;
  /** Removes the resource and all its versions; answers its latest version, or undefined when not visible. */
  delete(idOrSlug: string, scope: ResourceScope): Promise<ResourceRecord<C> | undefined>;
  /**
   * The resource `id` as declared (a file read at every start): created with that id when absent, a
   * new version when its content differs from the latest, else left alone, so declaring the same
   * file again adds nothing. Throws when the id exists in another scope.
   */
  declare(id: string, draft: ResourceDraft<C>): Promise<{ record: ResourceRecord<C>; outcome: DeclareOutcome }>;
  /**
   * Synchronous, for the request path and the plan builder: no I/O (the Redis adapter answers from
   * its mirror). What a request's gateway key may use (security/tenancy.ts `usableBy`): its own
   * (organisation, workspace) pair; a key bound to nothing uses only unbound resources. Without a
   * scope (operator tools), every resource is visible and a slug resolves only when exactly one scope
   * has it.
   */
  lookup(idOrSlug: string, versionId?: string, scope?: ResourceScope): ResourceRecord<C> | undefined;
  /** Changes on every write seen (local or, with Redis, another instance's): a plan cache key part. */
  generation(): number;
}

/**
 * The scope a resource's slug is unique in: its (organisation, workspace) pair, or its organisation
 * for an organisation-wide one (security/tenancy.ts `tenantKey`).
 */
export function scopeKey(s: ResourceScope): string {
  return tenantKey(s);
}

export const SLUG_MAX = 64;

/**
 * A URL-friendly slug from a name: lower case ASCII letters, digits and single dashes, accents
 * dropped, at most 60 characters (room for a `-n` suffix); `fallback` when nothing is left. A slug
 * never looks like a UUID (ids are UUIDs and are looked up first): such a slug gets the fallback's
 * first letter and a dash in front.
 */
export function slugify(name: string, fallback: string): string {
  let s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX - 4)
    .replace(/-+$/, '');
  if (s === '') s = fallback;
  if (isUuid(s)) s = `${fallback[0]}-${s}`.slice(0, SLUG_MAX - 4);
  return s;
}

/** The n-th candidate for a slug (1: the base itself, then `base-2`, `base-3`, ...). */
export function slugCandidate(base: string, n: number): string {
  return n === 1 ? base : `${base}-${n}`;
}

/** Candidates tried before a create gives up (the Redis script uses the same bound). */
export const SLUG_ATTEMPTS = 1000;
