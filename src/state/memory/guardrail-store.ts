import { randomUUID } from 'node:crypto';
import { GuardrailIndex, versionRecord } from '../guardrail-index.js';
import {
  scopeKey,
  slugCandidate,
  slugify,
  SLUG_ATTEMPTS,
  type GuardrailChange,
  type GuardrailDraft,
  type GuardrailListQuery,
  type GuardrailPage,
  type GuardrailRecord,
  type GuardrailScope,
  type GuardrailStore,
  type GuardrailStoreOptions,
} from '../guardrail-store.js';

/** The embedded default: guardrails in this process only. */
export class MemoryGuardrailStore implements GuardrailStore {
  readonly kind = 'memory' as const;
  private readonly index = new GuardrailIndex();
  private readonly now: () => number;
  private seq = 0;

  constructor(opts: GuardrailStoreOptions = {}) {
    this.now = opts.now ?? Date.now;
  }

  async create(draft: GuardrailDraft): Promise<GuardrailRecord> {
    const scope = scopeKey(draft);
    const base = slugify(draft.name);
    let slug: string | undefined;
    for (let n = 1; n <= SLUG_ATTEMPTS && slug === undefined; n++) {
      const c = slugCandidate(base, n);
      if (!this.index.slugTaken(scope, c)) slug = c;
    }
    if (slug === undefined) throw new Error(`no free slug for "${base}" after ${SLUG_ATTEMPTS} tries`);
    const at = new Date(this.now()).toISOString();
    const record = versionRecord(randomUUID(), slug, draft, draft, at, at);
    this.index.put({ id: record.id, slug, scope, seq: ++this.seq, latest: record.version_id, versions: new Map([[record.version_id, record]]) });
    return record;
  }

  async get(idOrSlug: string, scope: GuardrailScope, versionId?: string): Promise<GuardrailRecord | undefined> {
    return this.index.lookup(idOrSlug, versionId, scope);
  }

  async list(scope: GuardrailScope, query: GuardrailListQuery): Promise<GuardrailPage> {
    return this.index.list(scope, query);
  }

  async update(idOrSlug: string, scope: GuardrailScope, change: GuardrailChange): Promise<GuardrailRecord | undefined> {
    const entry = this.index.find(idOrSlug, scope);
    if (!entry) return undefined;
    const prev = this.index.record(entry)!;
    const record = versionRecord(entry.id, entry.slug, change, prev, prev.created_at, new Date(this.now()).toISOString());
    this.index.addVersion(entry, record);
    return record;
  }

  async delete(idOrSlug: string, scope: GuardrailScope): Promise<GuardrailRecord | undefined> {
    const entry = this.index.find(idOrSlug, scope);
    if (!entry) return undefined;
    this.index.remove(entry.id);
    return this.index.record(entry);
  }

  lookup(idOrSlug: string, versionId?: string, scope?: GuardrailScope): GuardrailRecord | undefined {
    return this.index.lookup(idOrSlug, versionId, scope);
  }

  generation(): number {
    return this.index.generation;
  }
}
