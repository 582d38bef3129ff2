/** A resource as a Redis hash (resource-scripts.ts): its versions as JSON, and the hash read back. */
import { scopeKey, type ResourceRecord } from '../resource-store.js';
import type { ResourceEntry } from '../resource-index.js';

/** A version as stored in Redis: the record without id and slug (kept once, on the resource's hash). */
export function toStored<C>(r: ResourceRecord<C>): string {
  const { id: _id, slug: _slug, ...rest } = r;
  return JSON.stringify(rest);
}

/**
 * A resource's hash → its mirror entry (undefined when the hash is empty or incomplete). The entry's
 * scope is computed from the record's own workspace_id and organisation_id, not read from the hash's
 * `scope` string: records stored before scopes were (organisation, workspace) pairs carry `w:<ws>`
 * there even when they have an organisation, and must be found in their pair.
 */
export function toEntry<C>(id: string, seq: number, hash: Record<string, string>): ResourceEntry<C> | undefined {
  const { slug, scope: stored, latest } = hash;
  if (slug === undefined || stored === undefined || latest === undefined) return undefined;
  const versions = new Map<string, ResourceRecord<C>>();
  for (const field in hash) {
    if (!field.startsWith('v:')) continue;
    const v = JSON.parse(hash[field]!) as Omit<ResourceRecord<C>, 'id' | 'slug'>;
    versions.set(v.version_id, { id, slug, ...v } as ResourceRecord<C>);
  }
  const current = versions.get(latest);
  if (!current) return undefined;
  return { id, slug, scope: scopeKey(current), seq, latest, versions };
}
