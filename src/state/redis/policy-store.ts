import { randomUUID } from 'node:crypto';
import {
  changed,
  isPolicyId,
  newPolicy,
  pageOf,
  policyMatches,
  policyVisible,
  redeclared,
  type DeclaredPolicy,
  type PolicyDefinition,
  type PolicyDraft,
  type PolicyListQuery,
  type PolicyPage,
  type PolicyScope,
  type PolicyStore,
  type PolicyStoreOptions,
  type UsageLimitPolicy,
} from '../policy-store.js';
import { observed, type RedisConnection } from './connection.js';
import { followChannel, type SyncTracker } from './sync-tracker.js';

export interface RedisPolicyStoreOptions extends PolicyStoreOptions {
  /** Key prefix (default `sluice:`). */
  prefix?: string;
}

export const REDIS_POLICY_STORE = 'redis-policy';

/** Where a prefix's policies live in Redis. Exported for tests that look behind the store's back. */
export function policyKeys(prefix: string) {
  return {
    /** ZSET id → creation sequence number (the list's order). */
    ids: `${prefix}pol:ids`,
    /** STRING counter for the sequence. */
    seq: `${prefix}pol:seq`,
    /** STRING per policy: its record as JSON, without the usage map (the usage counters hold it). */
    policy: (id: string) => `${prefix}pol:p:${id}`,
    /** Pub/sub channel: the id of every policy written, so every instance's mirror follows. */
    channel: `${prefix}pol:changed`,
  };
}

// KEYS: policy, ids, seq. ARGV: id, record JSON, channel. 1 when stored, 0 when the id is taken.
const CREATE_LUA = `
if redis.call('SET', KEYS[1], ARGV[2], 'NX') == false then return 0 end
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1
`;

// KEYS: policy. ARGV: the JSON read, the JSON to write, id, channel.
// Compare-and-set: 1 when written, 0 when the record changed meanwhile (the caller re-reads).
const REPLACE_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[4], ARGV[3])
return 1
`;

interface PolicyCommands {
  sluicePolCreate(...args: string[]): Promise<number>;
  sluicePolReplace(...args: string[]): Promise<number>;
}

/** Read-modify-write rounds before a write under contention gives up (each loses only to a completed write). */
const CAS_ATTEMPTS = 10;

type Stored = Omit<UsageLimitPolicy, 'value_key_usage_map'>;

function toStored(p: UsageLimitPolicy): string {
  const { value_key_usage_map: _u, ...rest } = p;
  return JSON.stringify(rest);
}

const parse = (text: string): UsageLimitPolicy => ({ ...(JSON.parse(text) as Stored), value_key_usage_map: {} });

/**
 * Shared policies: each a JSON string under its own key, and a sorted set keeping creation order.
 * Management reads go to Redis (they are rare and may wait). Updates are compare-and-set on the
 * record's JSON (a Lua script), so two instances' concurrent writes never lose one silently. A list
 * reads every record (policies are few; filtering is in this process).
 *
 * Enforcement reads `active()` on every request, so it answers from a local mirror of every policy:
 * loaded on each (re)connect, changed at once by this instance's writes, and by another instance's
 * through the `pol:changed` channel (each message names a policy, which is then re-read).
 */
export class RedisPolicyStore implements PolicyStore {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  private readonly keys: ReturnType<typeof policyKeys>;
  private readonly now: () => number;
  private readonly mirror = new Map<string, UsageLimitPolicy>();
  private gen = 0;
  private activeList: UsageLimitPolicy[] | undefined;
  private readonly sync: SyncTracker;
  private readonly stopListening: () => void;
  /** Ids written or announced while a full load runs: re-read after it (the load may predate them). */
  private touchedDuringLoad: Set<string> | undefined;

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisPolicyStoreOptions = {},
  ) {
    this.prefix = opts.prefix ?? 'sluice:';
    this.keys = policyKeys(this.prefix);
    this.now = opts.now ?? Date.now;
    conn.client.defineCommand('sluicePolCreate', { numberOfKeys: 3, lua: CREATE_LUA });
    conn.client.defineCommand('sluicePolReplace', { numberOfKeys: 1, lua: REPLACE_LUA });
    ({ sync: this.sync, stop: this.stopListening } = followChannel(
      'RedisPolicyStore',
      conn,
      this.keys.channel,
      () => this.op('load', () => this.load()),
      (id) => void this.refresh(id).catch(() => {}),
    ));
  }

  /** Resolves once the mirror has been loaded from Redis, or rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return this.sync.ready(timeoutMs);
  }

  /** Stop listening (the connection is the caller's to close). */
  close(): void {
    this.stopListening();
    this.sync.close();
  }

  active(): readonly UsageLimitPolicy[] {
    return (this.activeList ??= [...this.mirror.values()].filter((p) => p.status === 'active'));
  }

  generation(): number {
    return this.gen;
  }

  async create(draft: PolicyDraft): Promise<UsageLimitPolicy> {
    const p = newPolicy(randomUUID(), draft, this.at());
    const done = await this.op('create', () =>
      this.commands().sluicePolCreate(this.keys.policy(p.id), this.keys.ids, this.keys.seq, p.id, toStored(p), this.keys.channel),
    );
    if (done !== 1) throw new Error(`policy id ${p.id} is taken`);
    this.mirrorPut(p);
    return p;
  }

  async get(id: string, scope: PolicyScope): Promise<UsageLimitPolicy | undefined> {
    const r = await this.read(id);
    return r && policyVisible(r.policy, scope) ? r.policy : undefined;
  }

  async list(scope: PolicyScope, query: PolicyListQuery): Promise<PolicyPage> {
    return this.op('list', async () => {
      const client = this.conn.client;
      const ids = await client.zrange(this.keys.ids, '0', '-1');
      const matching: UsageLimitPolicy[] = [];
      for (let i = 0; i < ids.length; i += 100) {
        const chunk = ids.slice(i, i + 100);
        const texts = await client.mget(...chunk.map((id) => this.keys.policy(id)));
        for (const text of texts) {
          if (text === null) continue;
          const p = parse(text);
          if (policyVisible(p, scope) && policyMatches(p, query)) matching.push(p);
        }
      }
      return pageOf(matching, query);
    });
  }

  async update(id: string, scope: PolicyScope, change: PolicyDefinition): Promise<UsageLimitPolicy | undefined> {
    return this.replace(id, scope, (p) => changed(p, change, this.at()));
  }

  async archive(id: string, scope: PolicyScope): Promise<UsageLimitPolicy | undefined> {
    return this.replace(id, scope, (p) => (p.status === 'archived' ? undefined : changed(p, { ...p, status: 'archived' }, this.at())));
  }

  async declare(d: DeclaredPolicy): Promise<UsageLimitPolicy> {
    const id = d.id.toLowerCase();
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const fresh = newPolicy(id, d, this.at());
      const created = await this.op('create', () =>
        this.commands().sluicePolCreate(this.keys.policy(id), this.keys.ids, this.keys.seq, id, toStored(fresh), this.keys.channel),
      );
      if (created === 1) {
        this.mirrorPut(fresh);
        return fresh;
      }
      const out = await this.replace(id, {}, (p) => redeclared(p, d, this.at()), 1);
      if (out) return out;
      // deleted between the two calls (only a test's cleanup does that): try again
    }
    throw new Error(`policy ${id}: could not be declared after ${CAS_ATTEMPTS} attempts (concurrent writes)`);
  }

  /**
   * Read, let `next` make the new record (undefined: nothing to write, answer the current one),
   * compare-and-set; on a lost race read again. undefined when the policy is not visible.
   */
  private async replace(
    id: string,
    scope: PolicyScope,
    next: (p: UsageLimitPolicy) => UsageLimitPolicy | undefined,
    attempts = CAS_ATTEMPTS,
  ): Promise<UsageLimitPolicy | undefined> {
    for (let attempt = 0; attempt < attempts; attempt++) {
      const r = await this.read(id);
      if (!r || !policyVisible(r.policy, scope)) return undefined;
      const p = next(r.policy);
      if (!p) return r.policy;
      const done = await this.op('update', () => this.commands().sluicePolReplace(this.keys.policy(p.id), r.text, toStored(p), p.id, this.keys.channel));
      if (done === 1) {
        this.mirrorPut(p);
        return p;
      }
    }
    throw new Error(`policy ${id}: the record kept changing; not written after ${attempts} attempts`);
  }

  /** The record and the exact JSON it was read from (the compare-and-set's expected value). */
  private async read(id: string): Promise<{ policy: UsageLimitPolicy; text: string } | undefined> {
    if (!isPolicyId(id)) return undefined;
    const text = await this.op('get', () => this.conn.client.get(this.keys.policy(id.toLowerCase())));
    if (text === null) return undefined;
    return { policy: parse(text), text };
  }

  /** Read every policy and replace the mirror; then re-read those written meanwhile. */
  private async load(): Promise<void> {
    const touched = new Set<string>();
    this.touchedDuringLoad = touched;
    const next = new Map<string, UsageLimitPolicy>();
    try {
      const client = this.conn.client;
      const ids = await client.zrange(this.keys.ids, '0', '-1');
      for (let i = 0; i < ids.length; i += 100) {
        const texts = await client.mget(...ids.slice(i, i + 100).map((id) => this.keys.policy(id)));
        for (const text of texts) {
          if (text === null) continue;
          const p = parse(text);
          next.set(p.id, p);
        }
      }
    } finally {
      this.touchedDuringLoad = undefined;
    }
    this.mirror.clear();
    for (const [id, p] of next) this.mirror.set(id, p);
    this.changed();
    for (const id of touched) await this.refresh(id);
  }

  /** Re-read one policy into the mirror (gone in Redis: gone here). */
  private async refresh(id: string): Promise<void> {
    if (!isPolicyId(id)) return;
    this.touchedDuringLoad?.add(id);
    const text = await this.op('refresh', () => this.conn.client.get(this.keys.policy(id)));
    if (text === null) {
      if (this.mirror.delete(id)) this.changed();
    } else this.mirrorPut(parse(text));
  }

  /** A copy goes in: the record answered to a caller is the caller's to change. */
  private mirrorPut(p: UsageLimitPolicy): void {
    this.touchedDuringLoad?.add(p.id);
    this.mirror.set(p.id, structuredClone(p));
    this.changed();
  }

  private changed(): void {
    this.gen++;
    this.activeList = undefined;
  }

  private op<T>(name: string, fn: () => Promise<T>): Promise<T> {
    return observed(this.conn, REDIS_POLICY_STORE, name, fn);
  }

  private commands(): PolicyCommands {
    return this.conn.client as unknown as PolicyCommands;
  }

  private at(): string {
    return new Date(this.now()).toISOString();
  }
}
