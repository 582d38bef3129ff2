import type { CacheStore } from '../cache-store.js';
import { observed, type RedisConnection } from './connection.js';

export interface RedisCacheStoreOptions {
  /** Prepended to every key (default `sluice:`), so several gateways or tests can share a Redis. */
  prefix?: string;
  /** The store name operations are reported under (default `redis-cache`). */
  name?: string;
}

export const REDIS_CACHE_STORE = 'redis-cache';

/**
 * The shared cache: GET / SET PX / DEL under a key prefix. Every operation is timed and reported to
 * the observer as store `redis-cache` (or the name it is given). While Redis is down each call rejects at once (the connection
 * has no offline queue), which the cache operator turns into DISABLED.
 */
export class RedisCacheStore implements CacheStore {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  private readonly name: string;

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisCacheStoreOptions = {},
  ) {
    this.prefix = opts.prefix ?? 'sluice:';
    this.name = opts.name ?? REDIS_CACHE_STORE;
  }

  get(key: string): Promise<string | undefined> {
    return observed(this.conn, this.name, 'get', async () => (await this.conn.client.get(this.prefix + key)) ?? undefined);
  }

  set(key: string, value: string, ttlSeconds: number): Promise<void> {
    return observed(this.conn, this.name, 'set', async () => {
      const ms = Math.round(ttlSeconds * 1000);
      if (!(ms > 0)) {
        // Nothing to keep: like the memory store, a zero time to live stores nothing (and drops the old value).
        await this.conn.client.del(this.prefix + key);
        return;
      }
      await this.conn.client.set(this.prefix + key, value, 'PX', ms);
    });
  }

  delete(key: string): Promise<void> {
    return observed(this.conn, this.name, 'delete', async () => {
      await this.conn.client.del(this.prefix + key);
    });
  }
}
