import { randomUUID } from 'node:crypto';
import { GuardrailIndex, versionRecord, type GuardrailEntry } from '../guardrail-index.js';
import {
  scopeKey,
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
import { followChannel, type SyncTracker } from './sync-tracker.js';
import { observed, type RedisConnection } from './connection.js';

export interface RedisGuardrailStoreOptions extends GuardrailStoreOptions {
  /** Key prefix (default `sluice:`). */
  prefix?: string;
}

export const REDIS_GUARDRAIL_STORE = 'redis-guardrail';

/** Where a prefix's guardrails live in Redis. Exported for tests that look behind the store's back. */
export function guardrailKeys(prefix: string) {
  return {
    /** ZSET id → creation sequence number (the list's order). */
    ids: `${prefix}gr:ids`,
    /** STRING counter for the sequence. */
    seq: `${prefix}gr:seq`,
    /** HASH `scope\nslug` → id: slug uniqueness per scope. */
    slugs: `${prefix}gr:slugs`,
    /** HASH per guardrail: slug, scope, latest (version id), `v:<version_id>` → the version's JSON. */
    guardrail: (id: string) => `${prefix}gr:g:${id}`,
    /** Pub/sub channel: the id of every guardrail written or deleted. */
    channel: `${prefix}gr:changed`,
  };
}

// KEYS: ids, slugs, guardrail hash, seq. ARGV: id, scope, base slug, version id, version JSON, channel, attempts.
// Takes the first free slug (base, base-2, ...) within the scope, stores the first version, publishes.
const CREATE_LUA = `
local slug
for n = 1, tonumber(ARGV[7]) do
  local c = ARGV[3]
  if n > 1 then c = ARGV[3] .. '-' .. n end
  if redis.call('HSETNX', KEYS[2], ARGV[2] .. '\\n' .. c, ARGV[1]) == 1 then
    slug = c
    break
  end
end
if not slug then return false end
local seq = redis.call('INCR', KEYS[4])
redis.call('ZADD', KEYS[1], seq, ARGV[1])
redis.call('HSET', KEYS[3], 'slug', slug, 'scope', ARGV[2], 'latest', ARGV[4], 'v:' .. ARGV[4], ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[1])
return {slug, seq}
`;

// KEYS: guardrail hash. ARGV: id, version id, version JSON, channel. 0 when the guardrail is gone.
const UPDATE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'latest', ARGV[2], 'v:' .. ARGV[2], ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 1
`;

// KEYS: guardrail hash, slugs, ids. ARGV: id, channel. 0 when already gone.
const DELETE_LUA = `
local f = redis.call('HMGET', KEYS[1], 'slug', 'scope')
if not f[1] then return 0 end
redis.call('HDEL', KEYS[2], f[2] .. '\\n' .. f[1])
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
`;

interface GuardrailCommands {
  sluiceGrCreate(...args: (string | number)[]): Promise<[string, number] | null>;
  sluiceGrUpdate(...args: (string | number)[]): Promise<number>;
  sluiceGrDelete(...args: (string | number)[]): Promise<number>;
}

/** A version as stored in Redis: the record without id and slug (kept once, on the guardrail's hash). */
type StoredVersion = Omit<GuardrailRecord, 'id' | 'slug'>;

function toStored(r: GuardrailRecord): string {
  const { id: _id, slug: _slug, ...rest } = r;
  return JSON.stringify(rest);
}

/**
 * Shared guardrails. Each guardrail is a hash in Redis (all versions kept), a sorted set orders them
 * and a hash keeps slugs unique per scope (the create script picks the slug atomically, so two
 * instances never hand out the same one). Reads, and the synchronous `lookup` of the plan builder,
 * answer from a local mirror: loaded on every (re)connect, kept current by the `gr:changed` channel
 * (each message names a guardrail, which is then re-read). Writes go to Redis first and reject when
 * it does; another instance sees a write once the message arrives (milliseconds).
 */
export class RedisGuardrailStore implements GuardrailStore {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  private readonly keys: ReturnType<typeof guardrailKeys>;
  private readonly index = new GuardrailIndex();
  private readonly now: () => number;
  private readonly sync: SyncTracker;
  private readonly stopListening: () => void;
  private readonly refreshListeners = new Set<(id: string) => void>();
  /** Ids written or announced while a full load runs: re-read after it (the load may predate them). */
  private touchedDuringLoad: Set<string> | undefined;

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisGuardrailStoreOptions = {},
  ) {
    this.prefix = opts.prefix ?? 'sluice:';
    this.keys = guardrailKeys(this.prefix);
    this.now = opts.now ?? Date.now;
    conn.client.defineCommand('sluiceGrCreate', { numberOfKeys: 4, lua: CREATE_LUA });
    conn.client.defineCommand('sluiceGrUpdate', { numberOfKeys: 1, lua: UPDATE_LUA });
    conn.client.defineCommand('sluiceGrDelete', { numberOfKeys: 3, lua: DELETE_LUA });
    ({ sync: this.sync, stop: this.stopListening } = followChannel(
      'RedisGuardrailStore',
      conn,
      this.keys.channel,
      () => observed(conn, REDIS_GUARDRAIL_STORE, 'load', () => this.load()),
      (id) => void this.refresh(id).catch(() => {}),
    ));
  }

  /** Resolves once a first load from Redis has completed, or rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return this.sync.ready(timeoutMs);
  }

  /** Called after a guardrail named on the channel (by any instance) has been re-read into the mirror. */
  onRefreshed(cb: (id: string) => void): () => void {
    this.refreshListeners.add(cb);
    return () => this.refreshListeners.delete(cb);
  }

  async create(draft: GuardrailDraft): Promise<GuardrailRecord> {
    const scope = scopeKey(draft);
    const at = new Date(this.now()).toISOString();
    const first = versionRecord(randomUUID(), '', draft, draft, at, at);
    const out = await observed(this.conn, REDIS_GUARDRAIL_STORE, 'create', () =>
      this.commands().sluiceGrCreate(
        this.keys.ids,
        this.keys.slugs,
        this.keys.guardrail(first.id),
        this.keys.seq,
        first.id,
        scope,
        slugify(draft.name),
        first.version_id,
        toStored(first),
        this.keys.channel,
        SLUG_ATTEMPTS,
      ),
    );
    if (!out) throw new Error(`no free slug for "${slugify(draft.name)}" after ${SLUG_ATTEMPTS} tries`);
    const record = { ...first, slug: out[0] };
    this.touchedDuringLoad?.add(record.id);
    this.index.put({ id: record.id, slug: record.slug, scope, seq: Number(out[1]), latest: record.version_id, versions: new Map([[record.version_id, record]]) });
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
    const done = await observed(this.conn, REDIS_GUARDRAIL_STORE, 'update', () =>
      this.commands().sluiceGrUpdate(this.keys.guardrail(entry.id), entry.id, record.version_id, toStored(record), this.keys.channel),
    );
    this.touchedDuringLoad?.add(entry.id);
    if (done !== 1) {
      // deleted by another instance meanwhile
      this.index.remove(entry.id);
      return undefined;
    }
    const current = this.index.find(entry.id, undefined);
    if (current) this.index.addVersion(current, record);
    return record;
  }

  async delete(idOrSlug: string, scope: GuardrailScope): Promise<GuardrailRecord | undefined> {
    const entry = this.index.find(idOrSlug, scope);
    if (!entry) return undefined;
    const done = await observed(this.conn, REDIS_GUARDRAIL_STORE, 'delete', () =>
      this.commands().sluiceGrDelete(this.keys.guardrail(entry.id), this.keys.slugs, this.keys.ids, entry.id, this.keys.channel),
    );
    this.touchedDuringLoad?.add(entry.id);
    this.index.remove(entry.id);
    return done === 1 ? this.index.record(entry) : undefined;
  }

  lookup(idOrSlug: string, versionId?: string, scope?: GuardrailScope): GuardrailRecord | undefined {
    return this.index.lookup(idOrSlug, versionId, scope);
  }

  generation(): number {
    return this.index.generation;
  }

  /** Guardrails in the mirror (for tests). */
  size(): number {
    return this.index.size;
  }

  /** Stop listening (the connection is the caller's to close). */
  close(): void {
    this.stopListening();
    this.sync.close();
    this.refreshListeners.clear();
  }

  private commands(): GuardrailCommands {
    return this.conn.client as unknown as GuardrailCommands;
  }

  /** Read every guardrail and replace the mirror; then re-read those written meanwhile. */
  private async load(): Promise<void> {
    const touched = new Set<string>();
    this.touchedDuringLoad = touched;
    try {
      const client = this.conn.client;
      const flat = await client.zrange(this.keys.ids, '0', '-1', 'WITHSCORES');
      const entries: GuardrailEntry[] = [];
      for (let i = 0; i < flat.length; i += 100) {
        const pipe = client.pipeline();
        const ids: [string, number][] = [];
        for (let j = i; j < Math.min(i + 100, flat.length); j += 2) {
          ids.push([flat[j]!, Number(flat[j + 1])]);
          pipe.hgetall(this.keys.guardrail(flat[j]!));
        }
        const replies = (await pipe.exec()) ?? [];
        replies.forEach(([err, hash], k) => {
          if (err) throw err;
          const e = toEntry(ids[k]![0], ids[k]![1], hash as Record<string, string>);
          if (e) entries.push(e);
        });
      }
      this.index.replaceAll(entries);
    } finally {
      this.touchedDuringLoad = undefined;
    }
    for (const id of touched) await this.refresh(id);
  }

  /** Re-read one guardrail into the mirror (gone in Redis: gone here). */
  private async refresh(id: string): Promise<void> {
    this.touchedDuringLoad?.add(id);
    const [hash, score] = await observed(this.conn, REDIS_GUARDRAIL_STORE, 'refresh', () =>
      Promise.all([this.conn.client.hgetall(this.keys.guardrail(id)), this.conn.client.zscore(this.keys.ids, id)]),
    );
    const e = score === null ? undefined : toEntry(id, Number(score), hash);
    if (e) this.index.put(e);
    else this.index.remove(id);
    for (const cb of [...this.refreshListeners]) cb(id);
  }
}

/** A guardrail's hash → its mirror entry (undefined when the hash is empty or incomplete). */
function toEntry(id: string, seq: number, hash: Record<string, string>): GuardrailEntry | undefined {
  const { slug, scope, latest } = hash;
  if (slug === undefined || scope === undefined || latest === undefined) return undefined;
  const versions = new Map<string, GuardrailRecord>();
  for (const field in hash) {
    if (!field.startsWith('v:')) continue;
    const v = JSON.parse(hash[field]!) as StoredVersion;
    versions.set(v.version_id, { id, slug, ...v });
  }
  if (!versions.has(latest)) return undefined;
  return { id, slug, scope, seq, latest, versions };
}
