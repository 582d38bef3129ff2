import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryGuardrailStore } from '../../src/state/memory/guardrail-store.js';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';
import { guardrailKeys, RedisGuardrailStore } from '../../src/state/redis/guardrail-store.js';
import { redisResourceStoreContract, resourceStoreContract, type ResourceFixture } from './resource-store.contract.js';
import type { GuardrailChange } from '../../src/state/guardrail-store.js';
import { nextEvent, REDIS_URL, sharedRedis } from './redis-test-utils.js';

const GUARDRAIL: ResourceFixture<GuardrailChange> = {
  label: 'guardrail',
  content: (name, variant = 'a') =>
    variant === 'a'
      ? { name, checks: [{ id: 'default.contains', parameters: { words: ['card'], operator: 'none' } }], actions: { onFail: 'block' } }
      : { name, checks: [{ id: 'pii', parameters: {} }], actions: { onFail: 'log', message: 'no' } },
};

resourceStoreContract('MemoryGuardrailStore', GUARDRAIL, async (clock) => ({ store: new MemoryGuardrailStore({ now: clock.now }) }));

const draft = (name: string, workspace_id = 'ws-a') => ({
  name,
  checks: [{ id: 'default.regexMatch', parameters: { rule: '\\d{16}' } }],
  actions: { onFail: 'block' as const },
  workspace_id,
});

describe('RedisGuardrailStore (127.0.0.1:6379)', () => {
  const r = sharedRedis();

  redisResourceStoreContract('RedisGuardrailStore', GUARDRAIL, r, (conn, opts) => new RedisGuardrailStore(conn, opts));

  it('a second instance (another connection) sees the first one\'s guardrails: by its load, then by pub/sub', async () => {
    const prefix = `${r.runPrefix}share:`;
    const a = new RedisGuardrailStore(r.conn, { prefix });
    await a.ready(3000);
    const first = await a.create(draft('First'));
    const b = new RedisGuardrailStore(r.conn2, { prefix });
    try {
      await b.ready(3000);
      expect(b.lookup('first')).toEqual(first);

      // a create on a reaches b's mirror (lookup is synchronous: no Redis call on b)
      const gen = b.generation();
      let arrived = nextEvent<string>((cb) => b.onRefreshed(cb), 3000, 'the create on b');
      const second = await a.create(draft('Second', 'ws-b'));
      expect(await arrived).toBe(second.id);
      expect(b.lookup('second')).toEqual(second);
      expect(b.generation()).not.toBe(gen);

      // an update on b reaches a, and both keep the old version
      arrived = nextEvent<string>((cb) => a.onRefreshed((id) => id === first.id && cb(id)), 3000, 'the update on a');
      const v2 = await b.update('first', { workspace_id: 'ws-a' }, { name: 'First v2', checks: first.checks, actions: { onFail: 'log' } });
      await arrived;
      expect(a.lookup('first')).toEqual(v2);
      expect(a.lookup('first', first.version_id)).toEqual(first);

      // slugs are unique across instances: the script picks them in Redis, not from a mirror
      const [x, y] = await Promise.all([a.create(draft('Race')), b.create(draft('Race'))]);
      expect([x.slug, y.slug].sort()).toEqual(['race', 'race-2']);

      // a delete on a reaches b
      arrived = nextEvent<string>((cb) => b.onRefreshed((id) => id === second.id && cb(id)), 3000, 'the delete on b');
      await a.delete(second.id, {});
      await arrived;
      expect(b.lookup(second.id)).toBeUndefined();
      expect((await b.list({}, { page_size: 10, current_page: 0 })).data.map((r) => r.name)).toEqual(['First v2', 'Race', 'Race']);
    } finally {
      a.close();
      b.close();
    }
  });

  it('keeps each guardrail in one hash with every version, the slug index and the creation order', async () => {
    const prefix = `${r.runPrefix}layout:`;
    const keys = guardrailKeys(prefix);
    const s = new RedisGuardrailStore(r.conn, { prefix });
    await s.ready(3000);
    try {
      const v1 = await s.create(draft('Layout'));
      const v2 = await s.update(v1.id, {}, { name: 'Layout 2', checks: v1.checks, actions: {} });
      const hash = await r.conn.client.hgetall(keys.item(v1.id));
      expect(Object.keys(hash).sort()).toEqual(['latest', 'scope', 'slug', `v:${v1.version_id}`, `v:${v2!.version_id}`].sort());
      expect(hash.latest).toBe(v2!.version_id);
      expect(JSON.parse(hash[`v:${v1.version_id}`]!)).toMatchObject({ name: 'Layout', version_id: v1.version_id });
      expect(await r.conn.client.hget(keys.slugs, 'w:ws-a\nlayout')).toBe(v1.id);
      expect(await r.conn.client.zscore(keys.ids, v1.id)).not.toBeNull();
      await s.delete(v1.id, {});
      expect(await r.conn.client.exists(keys.item(v1.id))).toBe(0);
      expect(await r.conn.client.hget(keys.slugs, 'w:ws-a\nlayout')).toBeNull();
      expect(await r.conn.client.zscore(keys.ids, v1.id)).toBeNull();
    } finally {
      s.close();
    }
  });
});
