/** Key/value cache state behind a port: in memory (bounded, LRU) or Redis (shared). */
export interface CacheStore {
  readonly kind: 'memory' | 'redis';
  /** The stored value, or undefined when absent or expired. Rejects when the store is unavailable. */
  get(key: string): Promise<string | undefined>;
  /** Store with a time to live in seconds. Rejects when the store is unavailable. */
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** An in-process store answers at once: lets a hit skip the promise round trip. */
  getSync?(key: string): string | undefined;
}
