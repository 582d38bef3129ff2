import { randomUUID } from 'node:crypto';
import { declaredElsewhere, forRequests, ResourceIndex, sameContent, versionRecord, type ResourceEntry } from '../resource-index.js';
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
import { SyncTracker } from './sync-tracker.js';
import { observed, type RedisConnection } from './connection.js';
import { CREATE_LUA, DELETE_LUA, resourceKeys, UPDATE_LUA, type ResourceCommands } from './resource-scripts.js';
import { toEntry, toStored } from './resource-hash.js';

export interface RedisResourceStoreOptions extends ResourceStoreOptions {
  /** Key prefix (default `sluice:`). */
  prefix?: string;
}

/** Tries a declaration makes when other instances write the same resource meanwhile. */
const DECLARE_ATTEMPTS = 5;

/**
 * Shared resources of one kind. Each resource is a hash in Redis (all versions kept), a sorted set
 * orders them and a hash keeps slugs unique per scope (the create script picks the slug atomically,
 * so two instances never hand out the same one). Reads, and the synchronous `lookup` of the request
 * path, answer from a local mirror: loaded on every (re)connect, kept current by the kind's
 * `changed` channel (each message names a resource, which is then re-read). Writes go to Redis
 * first and reject when it does; another instance sees a write once the message arrives
 * (milliseconds).
 */
export class RedisResourceStore<C extends { name: string }> implements ScopedResourceStore<C> {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  private readonly keys: ReturnType<typeof resourceKeys>;
  private readonly index = new ResourceIndex<C>();
  private readonly now: () => number;
  /** The store's name in store metrics (`redis-guardrail`, `redis-prompt`). */
  private readonly storeName: string;
  private readonly sync: SyncTracker;
  private readonly stopListening: () => void;
  private readonly refreshListeners = new Set<(id: string) => void>();
  /** Ids written or announced while a full load runs: re-read after it (the load may predate them). */
  private touchedDuringLoad: Set<string> | undefined;

  constructor(
    private readonly resource: ResourceKind<C>,
    private readonly conn: RedisConnection,
    opts: RedisResourceStoreOptions = {},
  ) {
    this.prefix = opts.prefix ?? 'sluice:';
    this.keys = resourceKeys(this.prefix, resource.key);
    this.now = opts.now ?? Date.now;
    this.storeName = `redis-${resource.label}`;
    conn.client.defineCommand('sluiceResCreate', { numberOfKeys: 4, lua: CREATE_LUA });
    conn.client.defineCommand('sluiceResUpdate', { numberOfKeys: 1, lua: UPDATE_LUA });
    conn.client.defineCommand('sluiceResDelete', { numberOfKeys: 3, lua: DELETE_LUA });
    this.sync = new SyncTracker(`RedisResourceStore(${resource.label})`, conn, () => observed(conn, this.storeName, 'load', () => this.load()));
    this.stopListening = conn.listen(
      this.keys.channel,
      (id) => void this.refresh(id).catch(() => {}),
      () => void this.sync.run(),
    );
  }

  /** Resolves once a first load from Redis has completed, or rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return this.sync.ready(timeoutMs);
  }

  /** Called after a resource named on the channel (by any instance) has been re-read into the mirror. */
  onRefreshed(cb: (id: string) => void): () => void {
    this.refreshListeners.add(cb);
    return () => this.refreshListeners.delete(cb);
  }

  async create(draft: ResourceDraft<C>): Promise<ResourceRecord<C>> {
    const record = await this.insert(randomUUID(), draft);
    if (record === 'exists') throw new Error(`${this.resource.label} id collision`); // a fresh UUID: never
    return record;
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
    const out = await this.addVersion(entry.id, entry.slug, this.index.record(entry)!, change, '');
    return out === 'conflict' ? undefined : out;
  }

  async delete(idOrSlug: string, scope: ResourceScope): Promise<ResourceRecord<C> | undefined> {
    const entry = this.index.find(idOrSlug, scope);
    if (!entry) return undefined;
    const done = await observed(this.conn, this.storeName, 'delete', () =>
      this.commands().sluiceResDelete(this.keys.item(entry.id), this.keys.slugs, this.keys.ids, entry.id, this.keys.channel),
    );
    this.touchedDuringLoad?.add(entry.id);
    this.index.remove(entry.id);
    return done === 1 ? this.index.record(entry) : undefined;
  }

  /**
   * Reads the resource from Redis (not the mirror), so two instances starting with the same file
   * agree: the create is atomic on the id, and a new version is added only over the latest version
   * it compared with (else it reads again).
   */
  async declare(id: string, draft: ResourceDraft<C>): Promise<{ record: ResourceRecord<C>; outcome: DeclareOutcome }> {
    for (let attempt = 0; attempt < DECLARE_ATTEMPTS; attempt++) {
      const [slug, scope, latest] = await observed(this.conn, this.storeName, 'declare', () =>
        this.conn.client.hmget(this.keys.item(id), 'slug', 'scope', 'latest'),
      );
      if (slug === null || scope === null || latest === null) {
        const record = await this.insert(id, draft);
        if (record !== 'exists') return { record, outcome: 'created' };
        continue;
      }
      const json = await observed(this.conn, this.storeName, 'declare', () => this.conn.client.hget(this.keys.item(id), `v:${latest}`));
      if (json === null) continue;
      const prev = { id, slug, ...JSON.parse(json) } as ResourceRecord<C>;
      // The scope compared is the record's own pair, not the hash's `scope` string (see `toEntry`).
      if (scopeKey(prev) !== scopeKey(draft)) throw declaredElsewhere(this.resource, id, scopeKey(prev));
      if (sameContent(this.resource, prev, draft)) return { record: prev, outcome: 'unchanged' };
      const out = await this.addVersion(id, slug, prev, draft, latest);
      if (out !== undefined && out !== 'conflict') return { record: out, outcome: 'updated' };
    }
    throw new Error(`${this.resource.label} ${id}: the declaration did not settle after ${DECLARE_ATTEMPTS} tries (other writers)`);
  }

  lookup(idOrSlug: string, versionId?: string, scope?: ResourceScope): ResourceRecord<C> | undefined {
    return this.index.lookup(idOrSlug, versionId, scope, forRequests);
  }

  generation(): number {
    return this.index.generation;
  }

  /** Resources in the mirror (for tests). */
  size(): number {
    return this.index.size;
  }

  /** Stop listening (the connection is the caller's to close). */
  close(): void {
    this.stopListening();
    this.sync.close();
    this.refreshListeners.clear();
  }

  private commands(): ResourceCommands {
    return this.conn.client as unknown as ResourceCommands;
  }

  /** Stores a first version under `id` (slug from the name, free in the scope); 'exists' when the id is taken. */
  private async insert(id: string, draft: ResourceDraft<C>): Promise<ResourceRecord<C> | 'exists'> {
    const scope = scopeKey(draft);
    const at = new Date(this.now()).toISOString();
    const first = versionRecord(this.resource, id, '', draft, draft, at, at);
    const base = slugify(draft.name, this.resource.label);
    // Start past the slugs the mirror knows are taken in this scope: a record stored before scopes
    // were (organisation, workspace) pairs holds its slug under its old scope string in the slugs
    // hash, which the script's HSETNX would not see.
    let start = 1;
    while (start < SLUG_ATTEMPTS && this.index.slugTaken(scope, slugCandidate(base, start))) start++;
    const out = await observed(this.conn, this.storeName, 'create', () =>
      this.commands().sluiceResCreate(
        this.keys.ids,
        this.keys.slugs,
        this.keys.item(id),
        this.keys.seq,
        id,
        scope,
        base,
        first.version_id,
        toStored(first),
        this.keys.channel,
        SLUG_ATTEMPTS,
        start,
      ),
    );
    if (out === -1) return 'exists';
    if (!out) throw new Error(`no free slug for "${base}" after ${SLUG_ATTEMPTS} tries`);
    const record = { ...first, slug: out[0] };
    this.touchedDuringLoad?.add(id);
    this.index.put({ id, slug: record.slug, scope, seq: Number(out[1]), latest: record.version_id, versions: new Map([[record.version_id, record]]) });
    return record;
  }

  /**
   * Adds a version over `prev` (only while `expected` is still the latest, unless it is ''):
   * undefined when the resource is gone, 'conflict' when another version came first.
   */
  private async addVersion(id: string, slug: string, prev: ResourceRecord<C>, change: C, expected: string): Promise<ResourceRecord<C> | 'conflict' | undefined> {
    const record = versionRecord(this.resource, id, slug, change, prev, prev.created_at, new Date(this.now()).toISOString());
    const done = await observed(this.conn, this.storeName, 'update', () =>
      this.commands().sluiceResUpdate(this.keys.item(id), id, record.version_id, toStored(record), this.keys.channel, expected),
    );
    this.touchedDuringLoad?.add(id);
    if (done === 0) {
      // deleted by another instance meanwhile
      this.index.remove(id);
      return undefined;
    }
    if (done === 2) return 'conflict';
    const current = this.index.find(id, undefined);
    if (current) this.index.addVersion(current, record);
    return record;
  }

  /** Read every resource and replace the mirror; then re-read those written meanwhile. */
  private async load(): Promise<void> {
    const touched = new Set<string>();
    this.touchedDuringLoad = touched;
    try {
      const client = this.conn.client;
      const flat = await client.zrange(this.keys.ids, '0', '-1', 'WITHSCORES');
      const entries: ResourceEntry<C>[] = [];
      for (let i = 0; i < flat.length; i += 100) {
        const pipe = client.pipeline();
        const ids: [string, number][] = [];
        for (let j = i; j < Math.min(i + 100, flat.length); j += 2) {
          ids.push([flat[j]!, Number(flat[j + 1])]);
          pipe.hgetall(this.keys.item(flat[j]!));
        }
        const replies = (await pipe.exec()) ?? [];
        replies.forEach(([err, hash], k) => {
          if (err) throw err;
          const e = toEntry<C>(ids[k]![0], ids[k]![1], hash as Record<string, string>);
          if (e) entries.push(e);
        });
      }
      this.index.replaceAll(entries);
    } finally {
      this.touchedDuringLoad = undefined;
    }
    for (const id of touched) await this.refresh(id);
  }

  /** Re-read one resource into the mirror (gone in Redis: gone here). */
  private async refresh(id: string): Promise<void> {
    this.touchedDuringLoad?.add(id);
    const [hash, score] = await observed(this.conn, this.storeName, 'refresh', () =>
      Promise.all([this.conn.client.hgetall(this.keys.item(id)), this.conn.client.zscore(this.keys.ids, id)]),
    );
    const e = score === null ? undefined : toEntry<C>(id, Number(score), hash);
    if (e) this.index.put(e);
    else this.index.remove(id);
    for (const cb of [...this.refreshListeners]) cb(id);
  }
}
