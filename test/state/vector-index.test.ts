import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryVectorIndex } from '../../src/state/memory/vector-index.js';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';
import { RedisVectorIndex, vectorKeys } from '../../src/state/redis/vector-index.js';
import { deleteByPrefix, nextEvent, REDIS_URL, sharedRedis } from './redis-test-utils.js';
import { vectorFactory } from './vector-fixtures.js';
import { vectorIndexContract } from './vector-index.contract.js';

vectorIndexContract('MemoryVectorIndex', async (clock) => ({ index: new MemoryVectorIndex({ now: clock.now }) }));

describe('RedisVectorIndex (127.0.0.1:6379)', () => {
  const r = sharedRedis();

  let n = 0;
  vectorIndexContract('RedisVectorIndex', async (clock) => {
    const prefix = `${r.runPrefix}${n++}:`;
    const index = new RedisVectorIndex(r.conn, { prefix, now: clock.now });
    await index.ready(3000);
    return {
      index,
      cleanup: async () => {
        index.close();
        await deleteByPrefix(r.conn, prefix);
      },
    };
  });

  it('a second instance (another connection) finds what the first added: by its initial load, then by pub/sub', async () => {
    const prefix = `${r.runPrefix}share:`;
    const f = vectorFactory(11);
    const a = new RedisVectorIndex(r.conn, { prefix });
    await a.ready(3000);
    const v1 = f.random(128);
    await a.add('gpt|ns', 'first', v1, 60);

    const b = new RedisVectorIndex(r.conn2, { prefix });
    try {
      await b.ready(3000);
      expect((await b.search('gpt|ns', v1, 0.99))?.id).toBe('first');

      const v2 = f.random(128);
      const arrived = nextEvent<[string, string]>((cb) => b.onRemoteAdd((p, id) => cb([p, id])), 3000, 'the added message on b');
      expect(await b.search('gpt|ns', v2, 0.99)).toBeUndefined();
      await a.add('gpt|ns', 'second', v2, 60);
      expect(await arrived).toEqual(['gpt|ns', 'second']);
      const m = await b.search('gpt|ns', f.near(v2, 0.97), 0.95);
      expect(m?.id).toBe('second');
      expect(b.size()).toBe(2);
    } finally {
      a.close();
      b.close();
    }
  });

  it('stores each vector as Float32 bytes in a per-partition hash, with its expiry in a sorted set', async () => {
    const prefix = `${r.runPrefix}layout:`;
    let t = 1_700_000_000_000;
    const index = new RedisVectorIndex(r.conn, { prefix, now: () => t });
    await index.ready(3000);
    try {
      const keys = vectorKeys(prefix);
      await index.add('p1', 'x', Float32Array.from([3, 4]), 30);
      const bytes = await r.conn.client.hgetBuffer(keys.vectors('p1'), 'x');
      expect(bytes?.length).toBe(8);
      expect(Array.from(new Float32Array(new Uint8Array(bytes!).buffer))).toEqual([Math.fround(0.6), Math.fround(0.8)]);
      expect(Number(await r.conn.client.zscore(keys.expiry('p1'), 'x'))).toBe(t + 30_000);
      expect(await r.conn.client.sismember(keys.partitions, 'p1')).toBe(1);
      const pttl = await r.conn.client.pttl(keys.vectors('p1'));
      expect(pttl).toBeGreaterThan(28_000);
      expect(pttl).toBeLessThanOrEqual(30_000);

      // expired ids are dropped lazily by a later add
      t += 31_000;
      await index.add('p1', 'y', Float32Array.from([1, 0]), 30);
      expect(await r.conn.client.hexists(keys.vectors('p1'), 'x')).toBe(0);
      expect(await r.conn.client.zscore(keys.expiry('p1'), 'x')).toBeNull();
      expect(await r.conn.client.hexists(keys.vectors('p1'), 'y')).toBe(1);
    } finally {
      index.close();
    }
  });

  it('the initial load skips expired entries', async () => {
    const prefix = `${r.runPrefix}expired-load:`;
    let t = 1_700_000_000_000;
    const a = new RedisVectorIndex(r.conn, { prefix, now: () => t });
    await a.ready(3000);
    const f = vectorFactory(3);
    const live = f.random(32);
    const old = f.random(32);
    await a.add('p', 'old', old, 5);
    await a.add('p', 'live', live, 600);
    t += 10_000;
    const b = new RedisVectorIndex(r.conn2, { prefix, now: () => t });
    try {
      await b.ready(3000);
      expect(b.size()).toBe(1);
      expect((await b.search('p', live, 0.99))?.id).toBe('live');
      expect(await b.search('p', old, 0.5)).toBeUndefined();
    } finally {
      a.close();
      b.close();
    }
  });
});

describe('MemoryVectorIndex', () => {
  it('is bounded: beyond maxEntries the oldest entry is evicted', async () => {
    const f = vectorFactory(5);
    const idx = new MemoryVectorIndex({ maxEntries: 3 });
    const vs = [f.random(16), f.random(16), f.random(16), f.random(16)];
    for (let i = 0; i < 4; i++) await idx.add('p', `v${i}`, vs[i]!, 60);
    expect(idx.size()).toBe(3);
    expect(await idx.search('p', vs[0]!, 0.99)).toBeUndefined();
    for (let i = 1; i < 4; i++) expect((await idx.search('p', vs[i]!, 0.99))?.id).toBe(`v${i}`);
  });

  it('the bound is per process, across partitions', async () => {
    const f = vectorFactory(6);
    const idx = new MemoryVectorIndex({ maxEntries: 2 });
    const a = f.random(16);
    await idx.add('p1', 'a', a, 60);
    await idx.add('p2', 'b', f.random(16), 60);
    await idx.add('p3', 'c', f.random(16), 60);
    expect(idx.size()).toBe(2);
    expect(await idx.search('p1', a, 0.99)).toBeUndefined();
  });
});
