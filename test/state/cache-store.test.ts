import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryBytes, MemoryCacheStore } from '../../src/state/memory/cache-store.js';
import { RedisCacheStore } from '../../src/state/redis/cache-store.js';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';
import { cacheStoreContract } from './cache-store.contract.js';
import { deleteByPrefix, REDIS_URL } from './redis-test-utils.js';
import { FakeClock } from '../helpers/clock.js';

cacheStoreContract('MemoryCacheStore', async () => {
  const clock = new FakeClock(1_000_000);
  return { store: new MemoryCacheStore({ now: clock.now }), advance: async (ms) => clock.advance(ms) };
});

describe('RedisCacheStore (127.0.0.1:6379)', () => {
  let conn: RedisConnection;
  const runPrefix = `sluice-test:${randomUUID()}:`;
  beforeAll(async () => {
    conn = createRedis(REDIS_URL);
    await conn.waitUntilReady(3000);
  });
  afterAll(async () => {
    await deleteByPrefix(conn, runPrefix);
    await conn.close();
  });

  let n = 0;
  cacheStoreContract('RedisCacheStore', async () => {
    const prefix = `${runPrefix}${n++}:`;
    return {
      store: new RedisCacheStore(conn, { prefix }),
      // Redis keeps real time and expiry has no event: wait the time out (short, bounded).
      advance: (ms) => new Promise((r) => setTimeout(r, ms)),
      cleanup: () => deleteByPrefix(conn, prefix),
    };
  });

  it('keeps keys under its prefix, with a PX expiry', async () => {
    const prefix = `${runPrefix}px:`;
    const store = new RedisCacheStore(conn, { prefix });
    await store.set('k', 'v', 30);
    expect(await conn.client.get(`${prefix}k`)).toBe('v');
    const pttl = await conn.client.pttl(`${prefix}k`);
    expect(pttl).toBeGreaterThan(29_000);
    expect(pttl).toBeLessThanOrEqual(30_000);
  });

  it('reports each operation to the observer as redis-cache, with ok and a duration', async () => {
    const ops: { store: string; op: string; seconds: number; ok: boolean }[] = [];
    const observed = createRedis(REDIS_URL, { observer: { operation: (store, op, seconds, ok) => ops.push({ store, op, seconds, ok }) } });
    try {
      await observed.waitUntilReady(3000);
      const store = new RedisCacheStore(observed, { prefix: `${runPrefix}obs:` });
      await store.set('k', 'v', 10);
      await store.get('k');
      await store.delete('k');
      expect(ops.map((o) => [o.store, o.op, o.ok])).toEqual([
        ['redis-cache', 'set', true],
        ['redis-cache', 'get', true],
        ['redis-cache', 'delete', true],
      ]);
      for (const o of ops) expect(o.seconds).toBeGreaterThan(0);
    } finally {
      await observed.close();
    }
  });
});

describe('MemoryCacheStore', () => {
  it('counts key and value at two bytes per character', async () => {
    const store = new MemoryCacheStore({ maxBytes: 1000 });
    await store.set('ab', 'cde', 10);
    expect(entryBytes('ab', 'cde')).toBe(10);
    expect(store.bytes).toBe(10);
    await store.set('ab', 'c', 10);
    expect(store.bytes).toBe(6);
    await store.delete('ab');
    expect(store.bytes).toBe(0);
  });

  it('evicts the least recently used entries when the bytes run out; a get refreshes', async () => {
    // each entry: key 2 chars + value 48 chars = 100 bytes; 800 bytes hold 8
    const store = new MemoryCacheStore({ maxBytes: 800 });
    const v = 'v'.repeat(48);
    const keys = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8'];
    for (const k of keys) await store.set(k, v, 60);
    expect(store.bytes).toBe(800);
    expect(await store.get('k1')).toBe(v); // k1 is now the most recent; k2 the least
    await store.set('k9', v, 60);
    expect(await store.get('k2')).toBeUndefined();
    expect(await store.get('k1')).toBe(v);
    expect(store.bytes).toBe(800);
    // order now, oldest first: k3 k4 k5 k6 k7 k8 k9 k1. A 200-byte entry evicts k3 and k4.
    await store.set('kA', 'w'.repeat(98), 60);
    expect(await store.get('k3')).toBeUndefined();
    expect(await store.get('k4')).toBeUndefined();
    for (const k of ['k5', 'k6', 'k7', 'k8', 'k9', 'k1']) expect(await store.get(k)).toBe(v);
    expect(await store.get('kA')).toBe('w'.repeat(98));
    expect(store.bytes).toBe(800);
  });

  it('never holds more than maxBytes under churn', async () => {
    const store = new MemoryCacheStore({ maxBytes: 10_000 });
    for (let i = 0; i < 2000; i++) {
      await store.set(`key-${i}`, 'x'.repeat(i % 700), 60);
      expect(store.bytes).toBeLessThanOrEqual(10_000);
    }
    expect(await store.get('key-1999')).toBe('x'.repeat(1999 % 700));
  });

  it('refuses a value larger than a quarter of the bound, and drops the old value of that key', async () => {
    const store = new MemoryCacheStore({ maxBytes: 1000 });
    expect(store.setSync('k', 'x'.repeat(124), 60)).toBe(true); // (1 + 124) × 2 = 250: a quarter, kept
    expect(await store.get('k')).toBe('x'.repeat(124));
    expect(store.setSync('k2', 'x'.repeat(125), 60)).toBe(false); // (2 + 125) × 2 = 254: refused
    expect(await store.get('k2')).toBeUndefined();
    expect(store.setSync('k', 'y'.repeat(200), 60)).toBe(false);
    expect(await store.get('k')).toBeUndefined();
    expect(store.bytes).toBe(0);
  });

  it('expires entries on the injected clock, lazily on get', async () => {
    let t = 0;
    const store = new MemoryCacheStore({ now: () => t });
    await store.set('k', 'v', 10);
    t = 9_999;
    expect(await store.get('k')).toBe('v');
    t = 10_000;
    expect(store.size).toBe(1);
    expect(await store.get('k')).toBeUndefined();
    expect(store.size).toBe(0);
    expect(store.bytes).toBe(0);
  });

  it('a set also drops expired entries at the old end, with room to spare', async () => {
    let t = 0;
    const store = new MemoryCacheStore({ now: () => t });
    await store.set('k1', 'v', 1); // expires at 1000
    await store.set('k2', 'v', 60);
    t = 2000;
    await store.set('k3', 'v', 60);
    expect(store.size).toBe(2);
    expect(store.bytes).toBe(entryBytes('k2', 'v') + entryBytes('k3', 'v'));
  });
});
