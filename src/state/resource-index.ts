import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../util/canonical.js';
import type { TenantScope } from '../security/tenancy.js';
import {
  scopeKey,
  usableBy,
  visibleTo,
  type ResourceKind,
  type ResourceListQuery,
  type ResourcePage,
  type ResourceRecord,
  type ResourceScope,
} from './resource-store.js';

/** Whether a caller may reach what lives in a scope (security/tenancy.ts `visibleTo` or `usableBy`). */
type Allowed = (owner: TenantScope, caller: TenantScope | undefined) => boolean;

/** A request-time lookup's rule (exported for the adapters' `lookup`). */
export const forRequests: Allowed = usableBy;

/** One resource with all its versions. */
export interface ResourceEntry<C> {
  id: string;
  slug: string;
  /** scopeKey() of its scope: the slug is unique within it. */
  scope: string;
  /** Creation order (the list's order). */
  seq: number;
  latest: string;
  versions: Map<string, ResourceRecord<C>>;
}

/**
 * The resources of one kind held in memory, indexed by id and by slug: the whole memory adapter's
 * state, and the Redis adapter's local mirror. Reads are synchronous. Counts its changes (`generation`).
 */
export class ResourceIndex<C> {
  private readonly byId = new Map<string, ResourceEntry<C>>();
  /** `scope\nslug` → entry */
  private readonly byScopedSlug = new Map<string, ResourceEntry<C>>();
  /** slug → entries in every scope (for unscoped and organisation-wide slug lookups) */
  private readonly bySlug = new Map<string, ResourceEntry<C>[]>();
  private gen = 0;

  get generation(): number {
    return this.gen;
  }

  get size(): number {
    return this.byId.size;
  }

  /** By id only, whatever its scope. */
  entry(id: string): ResourceEntry<C> | undefined {
    return this.byId.get(id);
  }

  slugTaken(scope: string, slug: string): boolean {
    return this.byScopedSlug.has(`${scope}\n${slug}`);
  }

  /** Add or replace an entry (all its versions). */
  put(entry: ResourceEntry<C>): void {
    this.drop(entry.id);
    this.byId.set(entry.id, entry);
    this.byScopedSlug.set(`${entry.scope}\n${entry.slug}`, entry);
    const same = this.bySlug.get(entry.slug);
    if (same) same.push(entry);
    else this.bySlug.set(entry.slug, [entry]);
    this.gen++;
  }

  /** Add a version to an entry and make it the latest. */
  addVersion(entry: ResourceEntry<C>, record: ResourceRecord<C>): void {
    entry.versions.set(record.version_id, record);
    entry.latest = record.version_id;
    this.gen++;
  }

  remove(id: string): void {
    if (this.drop(id)) this.gen++;
  }

  /** Replace everything (a full load from the shared store). */
  replaceAll(entries: Iterable<ResourceEntry<C>>): void {
    this.byId.clear();
    this.byScopedSlug.clear();
    this.bySlug.clear();
    for (const e of entries) this.put(e);
    this.gen++;
  }

  /**
   * By id, else by slug: in the caller's scope, or the one visible entry with that slug. `allowed`
   * says what the caller may reach: `visibleTo` for a manager (the default), `usableBy` for a request.
   */
  find(idOrSlug: string, caller: ResourceScope | undefined, allowed: Allowed = visibleTo): ResourceEntry<C> | undefined {
    const byId = this.byId.get(idOrSlug);
    if (byId) return allowed(latest(byId), caller) ? byId : undefined;
    if (caller && caller.workspace_id !== undefined) return this.byScopedSlug.get(`${scopeKey(caller)}\n${idOrSlug}`);
    let found: ResourceEntry<C> | undefined;
    for (const e of this.bySlug.get(idOrSlug) ?? []) {
      if (!allowed(latest(e), caller)) continue;
      if (found) return undefined; // ambiguous: the same slug in two visible scopes
      found = e;
    }
    return found;
  }

  /** The latest version, or `versionId` when given (undefined when the entry has no such version). */
  record(entry: ResourceEntry<C>, versionId?: string): ResourceRecord<C> | undefined {
    return entry.versions.get(versionId ?? entry.latest);
  }

  lookup(idOrSlug: string, versionId: string | undefined, caller: ResourceScope | undefined, allowed: Allowed = visibleTo): ResourceRecord<C> | undefined {
    const e = this.find(idOrSlug, caller, allowed);
    return e && this.record(e, versionId);
  }

  list(caller: ResourceScope, q: ResourceListQuery): ResourcePage<ResourceRecord<C>> {
    const matching: ResourceRecord<C>[] = [];
    const entries = [...this.byId.values()].sort((a, b) => a.seq - b.seq);
    for (const e of entries) {
      const r = latest(e);
      if (!visibleTo(r, caller)) continue;
      if (q.workspace_id !== undefined && r.workspace_id !== q.workspace_id) continue;
      if (q.organisation_id !== undefined && r.organisation_id !== q.organisation_id) continue;
      matching.push(r);
    }
    const start = q.current_page * q.page_size;
    return { object: 'list', data: matching.slice(start, start + q.page_size), total: matching.length };
  }

  private drop(id: string): boolean {
    const old = this.byId.get(id);
    if (!old) return false;
    this.byId.delete(id);
    this.byScopedSlug.delete(`${old.scope}\n${old.slug}`);
    const same = this.bySlug.get(old.slug)?.filter((e) => e !== old) ?? [];
    if (same.length > 0) this.bySlug.set(old.slug, same);
    else this.bySlug.delete(old.slug);
    return true;
  }
}

function latest<C>(e: ResourceEntry<C>): ResourceRecord<C> {
  return e.versions.get(e.latest)!;
}

/** A new version's record: fresh version_id, the content of `change`, the owner scope of `owner`. */
export function versionRecord<C extends { name: string }>(
  kind: ResourceKind<C>,
  id: string,
  slug: string,
  change: C,
  owner: ResourceScope,
  createdAt: string,
  updatedAt: string,
): ResourceRecord<C> {
  const r = { id, slug, version_id: randomUUID(), ...kind.content(change), created_at: createdAt, last_updated_at: updatedAt } as ResourceRecord<C>;
  if (owner.workspace_id !== undefined) r.workspace_id = owner.workspace_id;
  if (owner.organisation_id !== undefined) r.organisation_id = owner.organisation_id;
  return r;
}

/** Does a declaration change nothing of the latest version (same content, key order aside)? */
export function sameContent<C extends { name: string }>(kind: ResourceKind<C>, a: C, b: C): boolean {
  return canonicalJson(kind.content(a)) === canonicalJson(kind.content(b));
}

/** A declaration may not move a resource: the id exists in another scope. */
export function declaredElsewhere(kind: ResourceKind<{ name: string }>, id: string, scope: string): Error {
  return new Error(`${kind.label} ${id} exists in another scope (${scope}); a declaration cannot move it`);
}
