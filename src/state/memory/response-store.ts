import { KeyValueResponseStore, RESPONSE_TTL_SECONDS_DEFAULT } from '../response-store.js';
import { MemoryCacheStore } from './cache-store.js';

export interface MemoryResponseStoreOptions {
  /** Bound on the bytes held; a response larger than a quarter of it is not kept (src/state/memory/cache-store.ts). */
  maxBytes: number;
  ttlSeconds?: number;
  /** Clock in ms (tests inject one). */
  now?: () => number;
}

/** The embedded default: this process's responses, bounded in bytes, least recently used out first. */
export function memoryResponseStore(o: MemoryResponseStoreOptions): KeyValueResponseStore {
  const kv = new MemoryCacheStore({ maxBytes: o.maxBytes, ...(o.now ? { now: o.now } : {}) });
  return new KeyValueResponseStore(kv, o.ttlSeconds ?? RESPONSE_TTL_SECONDS_DEFAULT);
}
