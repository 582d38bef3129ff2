import { randomUUID } from 'node:crypto';
import { declaredElsewhere, forRequests, ResourceIndex, sameContent, versionRecord } from '../resource-index.js';
import {
  scopeKey,
  slugCandidate,
  slugify,
  SLUG_ATTEMPTS,
  type DeclareOutcome,
  type ResourceDraft,
  type ResourceKind,
  type ResourceListQuery,
  type ResourcePage,
  type ResourceRecord,
  type ResourceScope,
  type ResourceStoreOptions,
  type ScopedResourceStore,
} from '../resource-store.js';

/** The embedded default: resources of one kind in this process only. */
export class MemoryResourceStore<C extends { name: string }> implements ScopedResourceStore<C> {
  readonly kind = 'memory' as const;
  private readonly index = new ResourceIndex<C>();
  private readonly now: () => number;
  private seq = 0;

  constructor(
    private readonly resource: ResourceKind<C>,
    opts: ResourceStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  async create(draft: ResourceDraft<C>): Promise<ResourceRecord<C>> {
    return this.insert(randomUUID(), draft);
  }

  async get(idOrSlug: string, scope: ResourceScope, versionId?: string): Promise<ResourceRecord<C> | undefined> {
    return this.index.lookup(idOrSlug, versionId, scope);
  }

  async list(scope: ResourceScope, query: ResourceListQuery): Promise<ResourcePage<ResourceRecord<C>>> {
    return this.index.list(scope, query);
  }

  async update(idOrSlug: string, scope: ResourceScope, change: C): Promise<ResourceRecord<C> | undefined> {
    const entry = this.index.find(idOrSlug, scope);
    if (!entry) return undefined;
    const prev = this.index.record(entry)!;
    const record = versionRecord(this.resource, entry.id, entry.slug, change, prev, prev.created_at, this.at());
    this.index.addVersion(entry, record);
    return record;
  }

  async delete(idOrSlug: string, scope: ResourceScope): Promise<ResourceRecord<C> | undefined> {
    const entry = this.index.find(idOrSlug, scope);
    if (!entry) return undefined;
    this.index.remove(entry.id);
    return this.index.record(entry);
  }

  async declare(id: string, draft: ResourceDraft<C>): Promise<{ record: ResourceRecord<C>; outcome: DeclareOutcome }> {
    const entry = this.index.entry(id);
    if (!entry) return { record: this.insert(id, draft), outcome: 'created' };
    if (entry.scope !== scopeKey(draft)) throw declaredElsewhere(this.resource, id, entry.scope);
    const latest = this.index.record(entry)!;
    if (sameContent(this.resource, latest, draft)) return { record: latest, outcome: 'unchanged' };
    return { record: (await this.update(id, {}, draft))!, outcome: 'updated' };
  }

  lookup(idOrSlug: string, versionId?: string, scope?: ResourceScope): ResourceRecord<C> | undefined {
    return this.index.lookup(idOrSlug, versionId, scope, forRequests);
  }

  generation(): number {
    return this.index.generation;
  }

  private insert(id: string, draft: ResourceDraft<C>): ResourceRecord<C> {
    const scope = scopeKey(draft);
    const base = slugify(draft.name, this.resource.label);
    let slug: string | undefined;
    for (let n = 1; n <= SLUG_ATTEMPTS && slug === undefined; n++) {
      const c = slugCandidate(base, n);
      if (!this.index.slugTaken(scope, c)) slug = c;
    }
    if (slug === undefined) throw new Error(`no free slug for "${base}" after ${SLUG_ATTEMPTS} tries`);
    const at = this.at();
    const record = versionRecord(this.resource, id, slug, draft, draft, at, at);
    this.index.put({ id, slug, scope, seq: ++this.seq, latest: record.version_id, versions: new Map([[record.version_id, record]]) });
    return record;
  }

  private at(): string {
    return new Date(this.now()).toISOString();
  }
}
