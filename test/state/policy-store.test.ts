import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryPolicyStore } from '../../src/state/memory/policy-store.js';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';
import { policyKeys, RedisPolicyStore } from '../../src/state/redis/policy-store.js';
import type { PolicyDraft } from '../../src/state/policy-store.js';
import { policyStoreContract } from './policy-store.contract.js';
import { deleteByPrefix, REDIS_URL, sharedRedis } from './redis-test-utils.js';

policyStoreContract('MemoryPolicyStore', async (clock) => ({ store: new MemoryPolicyStore({ now: clock.now }) }));

const draft = (name: string, over: Partial<PolicyDraft> = {}): PolicyDraft => ({
  name,
  type: 'tokens',
  status: 'active',
  conditions: [],
  group_by: [{ key: 'api_key' }],
  credit_limit: 100,
  alert_threshold: null,
  periodic_reset: null,
  workspace_id: 'ws-a',
  organisation_id: null,
  ...over,
});

describe('RedisPolicyStore (127.0.0.1:6379)', () => {
  const r = sharedRedis();

  let n = 0;
  policyStoreContract('RedisPolicyStore', async (clock) => {
    const prefix = `${r.runPrefix}${n++}:`;
    return { store: new RedisPolicyStore(r.conn, { prefix, now: clock.now }), cleanup: () => deleteByPrefix(r.conn, prefix) };
  });

  it('keeps the record as JSON, the creation order in a sorted set, the usage in a hash read into value_key_usage_map', async () => {
    const prefix = `${r.runPrefix}layout:`;
    const keys = policyKeys(prefix);
    const s = new RedisPolicyStore(r.conn, { prefix });
    const p = await s.create(draft('Layout'));
    const raw = JSON.parse((await r.conn.client.get(keys.policy(p.id)))!);
    expect(raw).toEqual({ ...p, value_key_usage_map: undefined });
    expect(await r.conn.client.zscore(keys.ids, p.id)).not.toBeNull();
    // what enforcement will write: counters per group value, beside the record
    await r.conn.client.hset(keys.usage(p.id), 'team-a', '42', 'team-b', '7.5');
    const expected = { 'team-a': 42, 'team-b': 7.5 };
    expect((await s.get(p.id, {}))?.value_key_usage_map).toEqual(expected);
    expect((await s.list({}, { page_size: 10, current_page: 0 })).data[0]?.value_key_usage_map).toEqual(expected);
    // an update keeps the counters; a declaration that changes the type clears them
    expect((await s.update(p.id, {}, { ...draft('Layout 2') }))?.value_key_usage_map).toEqual(expected);
    const d = await s.declare({ ...draft('Layout 2'), id: p.id, type: 'cost' });
    expect(d.value_key_usage_map).toEqual({});
    expect(await r.conn.client.exists(keys.usage(p.id))).toBe(0);
  });

  it('two instances share policies; concurrent updates of one policy from both all land (compare-and-set)', async () => {
    const prefix = `${r.runPrefix}share:`;
    const a = new RedisPolicyStore(r.conn, { prefix });
    const b = new RedisPolicyStore(r.conn2, { prefix });
    const p = await a.create(draft('Shared'));
    expect(await b.get(p.id, { workspace_id: 'ws-a' })).toEqual(p);
    // 10 writers, each changing the limit; every write is a whole record, none interleaved
    const limits = Array.from({ length: 10 }, (_, i) => 100 + i);
    const results = await Promise.all(limits.map((l, i) => (i % 2 ? a : b).update(p.id, {}, { ...draft('Shared'), credit_limit: l })));
    expect(results.map((r) => r?.credit_limit)).toEqual(limits);
    const final = await a.get(p.id, {});
    expect(limits).toContain(final?.credit_limit);
    // two instances declaring the same bootstrap policy at start make one policy
    const id = randomUUID();
    const [x, y] = await Promise.all([a.declare({ ...draft('Boot'), id }), b.declare({ ...draft('Boot'), id })]);
    expect(x.id).toBe(id);
    expect(y).toEqual(x);
    expect((await a.list({}, { page_size: 10, current_page: 0, type: 'tokens' })).data.filter((r) => r.id === id)).toHaveLength(1);
  });
});
