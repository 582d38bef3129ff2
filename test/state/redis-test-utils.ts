import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';

/** The shared test Redis. */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Delete every key under `prefix` (SCAN, never KEYS). */
export async function deleteByPrefix(conn: RedisConnection, prefix: string): Promise<void> {
  if (!conn.available()) return;
  let cursor = '0';
  do {
    const [next, keys] = await conn.client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await conn.client.del(...keys);
  } while (cursor !== '0');
}

/** Resolve when `subscribe(cb)` first calls back, or reject after `timeoutMs` naming `what`. */
export function nextEvent<T = void>(subscribe: (cb: (v: T) => void) => () => void, timeoutMs: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const off = subscribe((v) => {
      clearTimeout(timer);
      off();
      resolve(v);
    });
  });
}

/**
 * Two connections to the shared test Redis for one describe block (opened before its tests, closed
 * after), and a key prefix of its own whose keys are deleted at the end. Read the fields inside
 * tests and hooks (they are set in beforeAll).
 */
export function sharedRedis(): { readonly conn: RedisConnection; readonly conn2: RedisConnection; readonly runPrefix: string } {
  const s = { runPrefix: `sluice-test:${randomUUID()}:` } as { conn: RedisConnection; conn2: RedisConnection; runPrefix: string };
  beforeAll(async () => {
    s.conn = createRedis(REDIS_URL);
    s.conn2 = createRedis(REDIS_URL);
    await Promise.all([s.conn.waitUntilReady(3000), s.conn2.waitUntilReady(3000)]);
  });
  afterAll(async () => {
    await deleteByPrefix(s.conn, s.runPrefix);
    await Promise.all([s.conn.close(), s.conn2.close()]);
  });
  return s;
}
