import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryPolicyStore } from '../../src/state/memory/policy-store.js';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';
import { policyKeys, RedisPolicyStore } from '../../src/state/redis/policy-store.js';
import type { PolicyDraft } from '../../src/state/policy-store.js';
import { policyStoreContract } from './policy-store.contract.js';
import { deleteByPrefix, REDIS_URL, sharedRedis } from './redis-test-utils.js';
import { until } from '../cache-http/_http.js';

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
    const store = new RedisPolicyStore(r.conn, { prefix, now: clock.now });
    return {
      store,
      cleanup: async () => {
        store.close();
        await deleteByPrefix(r.conn, prefix);
      },
    };
  });

  it('keeps the record as JSON (no usage: the counters hold it) and the creation order in a sorted set', async () => {
    const prefix = `${r.runPrefix}layout:`;
    const keys = policyKeys(prefix);
    const s = new RedisPolicyStore(r.conn, { prefix });
    const p = await s.create(draft('Layout'));
    const raw = JSON.parse((await r.conn.client.get(keys.policy(p.id)))!);
    expect(raw).toEqual({ ...p, value_key_usage_map: undefined });
    expect(await r.conn.client.zscore(keys.ids, p.id)).not.toBeNull();
    expect((await s.get(p.id, {}))?.value_key_usage_map).toEqual({});
    s.close();
  });

  it('active(): a mirror that follows every instance\'s writes (pub/sub), re-read at connect; generation() moves with it', async () => {
    const prefix = `${r.runPrefix}mirror:`;
    const a = new RedisPolicyStore(r.conn, { prefix });
    const b = new RedisPolicyStore(r.conn2, { prefix });
    await Promise.all([a.ready(3000), b.ready(3000)]);
    const g0 = b.generation();
    const p = await a.create(draft('Mirrored'));
    // the writer's mirror has it at once
    expect(a.active().map((x) => x.id)).toEqual([p.id]);
    // the other instance's mirror once the message arrives
    await until('b to see the new policy', () => b.active().some((x) => x.id === p.id));
    expect(b.generation()).toBeGreaterThan(g0);
    // an answer is the caller's: changing it does not change the mirror
    p.name = 'changed here';
    expect(a.active()[0]!.name).toBe('Mirrored');
    await b.archive(p.id, {});
    expect(b.active()).toEqual([]);
    await until('a to see the archive', () => a.active().length === 0);
    // a third instance, made after the write, has it from its load at connect (no message to wait for)
    await a.update(p.id, {}, { ...draft('Mirrored'), status: 'active' });
    const c = new RedisPolicyStore(r.conn, { prefix });
    try {
      await c.ready(3000);
      expect(c.active().map((x) => x.id)).toEqual([p.id]);
    } finally {
      for (const s of [a, b, c]) s.close();
    }
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
