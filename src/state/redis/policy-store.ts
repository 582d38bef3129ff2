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
    /** STRING per policy: its record as JSON, without the usage map. */
    policy: (id: string) => `${prefix}pol:p:${id}`,
    /** HASH per policy: group value → usage in the current period (written by enforcement). */
    usage: (id: string) => `${prefix}pol:u:${id}`,
  };
}

// KEYS: policy, ids, seq. ARGV: id, record JSON. 1 when stored, 0 when the id is taken.
const CREATE_LUA = `
if redis.call('SET', KEYS[1], ARGV[2], 'NX') == false then return 0 end
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
return 1
`;

// KEYS: policy, usage. ARGV: the JSON read, the JSON to write, '1' to clear the usage.
// Compare-and-set: 1 when written, 0 when the record changed meanwhile (the caller re-reads).
const REPLACE_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
if ARGV[3] == '1' then redis.call('DEL', KEYS[2]) end
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

function usageMap(hash: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k in hash) out[k] = Number(hash[k]);
  return out;
}

/**
 * Shared policies: each a JSON string under its own key, a sorted set keeping creation order, and a
 * usage hash per policy that enforcement will count into (HINCRBYFLOAT) without rewriting the record.
 * No local mirror: management reads are rare and may wait on Redis. Updates are compare-and-set on
 * the record's JSON (a Lua script), so two instances' concurrent writes never lose one silently.
 * A list reads every record (policies are few; filtering is in this process), the usage only for
 * the page answered.
 */
export class RedisPolicyStore implements PolicyStore {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  private readonly keys: ReturnType<typeof policyKeys>;
  private readonly now: () => number;

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisPolicyStoreOptions = {},
  ) {
    this.prefix = opts.prefix ?? 'sluice:';
    this.keys = policyKeys(this.prefix);
    this.now = opts.now ?? Date.now;
    conn.client.defineCommand('sluicePolCreate', { numberOfKeys: 3, lua: CREATE_LUA });
    conn.client.defineCommand('sluicePolReplace', { numberOfKeys: 2, lua: REPLACE_LUA });
  }

  async create(draft: PolicyDraft): Promise<UsageLimitPolicy> {
    const p = newPolicy(randomUUID(), draft, this.at());
    const done = await this.op('create', () => this.commands().sluicePolCreate(this.keys.policy(p.id), this.keys.ids, this.keys.seq, p.id, toStored(p)));
    if (done !== 1) throw new Error(`policy id ${p.id} is taken`);
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
          const p: UsageLimitPolicy = { ...(JSON.parse(text) as Stored), value_key_usage_map: {} };
          if (policyVisible(p, scope) && policyMatches(p, query)) matching.push(p);
        }
      }
      const page = pageOf(matching, query);
      if (page.data.length > 0) {
        const pipe = client.pipeline();
        for (const p of page.data) pipe.hgetall(this.keys.usage(p.id));
        const replies = (await pipe.exec()) ?? [];
        replies.forEach(([err, hash], k) => {
          if (err) throw err;
          page.data[k]!.value_key_usage_map = usageMap(hash as Record<string, string>);
        });
      }
      return page;
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
      const created = await this.op('create', () => this.commands().sluicePolCreate(this.keys.policy(id), this.keys.ids, this.keys.seq, id, toStored(fresh)));
      if (created === 1) return fresh;
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
      const clear = p.type !== r.policy.type && Object.keys(p.value_key_usage_map).length === 0 ? '1' : '0';
      const done = await this.op('update', () => this.commands().sluicePolReplace(this.keys.policy(p.id), this.keys.usage(p.id), r.text, toStored(p), clear));
      if (done === 1) return p;
    }
    throw new Error(`policy ${id}: the record kept changing; not written after ${attempts} attempts`);
  }

  /** The record and the exact JSON it was read from (the compare-and-set's expected value). */
  private async read(id: string): Promise<{ policy: UsageLimitPolicy; text: string } | undefined> {
    if (!isPolicyId(id)) return undefined;
    const key = id.toLowerCase();
    const [text, usage] = await this.op('get', async () => {
      const replies = (await this.conn.client.multi().get(this.keys.policy(key)).hgetall(this.keys.usage(key)).exec()) ?? [];
      for (const [err] of replies) if (err) throw err;
      return [replies[0]?.[1] as string | null, replies[1]?.[1] as Record<string, string>] as const;
    });
    if (text === null || text === undefined) return undefined;
    return { policy: { ...(JSON.parse(text) as Stored), value_key_usage_map: usageMap(usage ?? {}) }, text };
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
