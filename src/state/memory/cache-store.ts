import type { CacheStore } from '../cache-store.js';

export interface MemoryCacheStoreOptions {
  /** Bound on the bytes held (keys and values, 2 bytes per UTF-16 code unit). Default 64 MiB. */
  maxBytes?: number;
  /** Clock in ms (tests inject one). */
  now?: () => number;
}

interface Entry {
  key: string;
  value: string;
  expiresAt: number;
  bytes: number;
}

export const DEFAULT_CACHE_MAX_BYTES = 64 * 1024 * 1024;

/** Bytes an entry is charged: JS strings are UTF-16, so two bytes per code unit of key and value. */
export function entryBytes(key: string, value: string): number {
  return (key.length + value.length) * 2;
}

/**
 * The embedded cache: least recently used first out, bounded in bytes, a time to live per entry.
 * A Map keeps insertion order, so re-inserting on every hit makes its first entry the least recently
 * used. Expired entries go when read, or when eviction reaches them.
 * An entry larger than a quarter of the bound is not stored: one response must not flush the cache.
 */
export class MemoryCacheStore implements CacheStore {
  readonly kind = 'memory' as const;
  readonly maxBytes: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  private used = 0;

  constructor(opts: MemoryCacheStoreOptions = {}) {
    this.maxBytes = opts.maxBytes ?? DEFAULT_CACHE_MAX_BYTES;
    if (!(this.maxBytes > 0)) throw new Error('MemoryCacheStore: maxBytes must be positive');
    this.now = opts.now ?? Date.now;
  }

  /** Bytes held now (for metrics and tests). */
  get bytes(): number {
    return this.used;
  }

  /** Entries held now, expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }

  async get(key: string): Promise<string | undefined> {
    return this.getSync(key);
  }

  getSync(key: string): string | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.remove(key, e);
      return undefined;
    }
    // most recently used: move to the end, under the stored key string (not the caller's new one,
    // which the old Map would otherwise keep alive past the young generation on every hit)
    this.entries.delete(e.key);
    this.entries.set(e.key, e);
    return e.value;
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.setSync(key, value, ttlSeconds);
  }

  /** Store; returns whether the value was kept (false: oversize or no time to live). */
  setSync(key: string, value: string, ttlSeconds: number): boolean {
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    const bytes = entryBytes(key, value);
    if (!(ttlSeconds > 0) || bytes > this.maxBytes / 4) return false;
    const now = this.now();
    this.makeRoom(bytes, now);
    this.entries.set(key, { key, value, expiresAt: now + ttlSeconds * 1000, bytes });
    this.used += bytes;
    return true;
  }

  async delete(key: string): Promise<void> {
    const e = this.entries.get(key);
    if (e) this.remove(key, e);
  }

  private remove(key: string, e: Entry): void {
    this.entries.delete(key);
    this.used -= e.bytes;
  }

  /**
   * Evict least recently used entries until `bytes` more fit. Expired entries met on the way go too
   * (a bounded look past the evicted ones, so a set stays O(evicted), never O(entries)).
   */
  private makeRoom(bytes: number, now: number): void {
    let looked = 0;
    for (const [k, e] of this.entries) {
      if (this.used + bytes <= this.maxBytes) {
        if (++looked > 8) break;
        if (e.expiresAt <= now) this.remove(k, e);
        continue;
      }
      this.remove(k, e);
    }
  }
}
