import { KeyValueResponseStore, RESPONSE_TTL_SECONDS_DEFAULT } from '../response-store.js';
import { RedisCacheStore } from './cache-store.js';
import type { RedisConnection } from './connection.js';

export interface RedisResponseStoreOptions {
  /** Prepended to every response id (default `sluice:response:`). */
  prefix?: string;
  ttlSeconds?: number;
}

export const REDIS_RESPONSE_STORE = 'redis-responses';

/** The shared store: every instance reads every response; each expires after its time to live. */
export function redisResponseStore(conn: RedisConnection, o: RedisResponseStoreOptions = {}): KeyValueResponseStore {
  const kv = new RedisCacheStore(conn, { prefix: o.prefix ?? 'sluice:response:', name: REDIS_RESPONSE_STORE });
  return new KeyValueResponseStore(kv, o.ttlSeconds ?? RESPONSE_TTL_SECONDS_DEFAULT);
}
