import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRequestLogStore } from '../../src/state/memory/request-log-store.js';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';
import { requestLogKey, RedisRequestLogStore } from '../../src/state/redis/request-log-store.js';
import { requestLogStoreContract } from './request-log-store.contract.js';
import { deleteByPrefix, REDIS_URL } from './redis-test-utils.js';

requestLogStoreContract('MemoryRequestLogStore', async (capacity) => {
  const store = new MemoryRequestLogStore(capacity);
  return { store, settle: () => Promise.resolve() };
});

describe('MemoryRequestLogStore', () => {
  it('refuses a capacity that is not a positive integer', () => {
    for (const c of [0, -1, 1.5, NaN]) expect(() => new MemoryRequestLogStore(c)).toThrow(/positive integer/);
  });
});

describe('RedisRequestLogStore (127.0.0.1:6379)', () => {
  const runPrefix = `sluice-test:${randomUUID()}:`;
  let conn: RedisConnection;
  beforeAll(async () => {
    conn = createRedis(REDIS_URL);
    await conn.waitUntilReady(3000);
  });
  afterAll(async () => {
    await deleteByPrefix(conn, runPrefix);
    await conn.close();
  });

  let n = 0;
  requestLogStoreContract('RedisRequestLogStore', async (capacity) => {
    const prefix = `${runPrefix}${n++}:`;
    const store = new RedisRequestLogStore(conn, { prefix, capacity });
    return {
      store,
      // Commands on one connection are answered in order: a PING sent after the XADDs returns after them.
      settle: async () => void (await conn.client.ping()),
      cleanup: async () => deleteByPrefix(conn, prefix),
    };
  });

  it('keeps one stream per prefix, capped near the capacity (MAXLEN ~), one JSON field per entry', async () => {
    const prefix = `${runPrefix}layout:`;
    const s = new RedisRequestLogStore(conn, { prefix, capacity: 100 });
    for (let i = 0; i < 1000; i++) s.append({ time: i, trace_id: `t-${i}`, path: '/v1/models', status: 200, latency_ms: 1 });
    await conn.client.ping();
    const len = await conn.client.xlen(requestLogKey(prefix));
    expect(len).toBeGreaterThanOrEqual(100);
    expect(len).toBeLessThan(1000);
    const [[, fields]] = (await conn.client.xrevrange(requestLogKey(prefix), '+', '-', 'COUNT', 1)) as [string, string[]][];
    expect(fields).toEqual(['r', JSON.stringify({ time: 999, trace_id: 't-999', path: '/v1/models', status: 200, latency_ms: 1 })]);
    // a query reads at most `capacity` entries, whatever the stream holds beyond the cap
    const page = await s.query({ scope: {}, page_size: 0, current_page: 0 });
    expect(page.total).toBe(100);
  });

  it('an append while Redis is unreachable neither throws nor waits; the failure is reported (metric, log)', async () => {
    const ops: string[] = [];
    const down = createRedis('redis://127.0.0.1:1', {
      retryDelayMs: () => 60_000,
      connectTimeoutMs: 200,
      observer: { operation: (store, op, _s, ok) => ops.push(`${store} ${op} ${ok}`) },
    });
    try {
      const s = new RedisRequestLogStore(down, { prefix: `${runPrefix}down:`, capacity: 10 });
      expect(s.append({ time: 1, trace_id: 't', path: '/', status: 200, latency_ms: 1 })).toBeUndefined();
      await expect(s.query({ scope: {}, page_size: 1, current_page: 0 })).rejects.toThrow();
      expect(ops).toEqual(['redis-request-log append false', 'redis-request-log query false']);
      expect(down.errors.count).toBeGreaterThanOrEqual(2);
    } finally {
      await down.close();
    }
  });
});
