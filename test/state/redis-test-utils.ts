import type { RedisConnection } from '../../src/state/redis/connection.js';

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
