import { keyDigest, type ApiKeyRecord } from '../../security/api-keys.js';
import type { ApiKeyStore } from '../api-key-store.js';

/**
 * Gateway keys in memory, by SHA-256 digest. `verify` hashes the presented key and looks the digest
 * up in a Map: one hash and one lookup, however many keys are stored (the store it replaces compared
 * the digest with every stored one, ~44 µs per request with 1,000 keys).
 *
 * Why this is constant-time where it matters: the only thing compared is the digest, never the key.
 * The Map's string comparison may stop at the first differing byte, so its timing could say how much
 * of a stored digest a guess's digest shares; that gives nothing towards a key that hashes to it
 * (finding one is a SHA-256 preimage). A `timingSafeEqual` of the digest after the lookup would
 * compare two values the lookup already found equal, and needs Buffers, which cost more than the
 * whole lookup here, so there is none.
 */
export class MemoryApiKeyStore implements ApiKeyStore {
  /** digest (latin1) → record */
  private readonly byDigest = new Map<string, ApiKeyRecord>();
  private v = 0;

  constructor(initial: Iterable<{ key: string; record: ApiKeyRecord }> = []) {
    for (const { key, record } of initial) this.insert(key, record);
  }

  get size(): number {
    return this.byDigest.size;
  }

  get version(): number {
    return this.v;
  }

  verify(presented: string): ApiKeyRecord | undefined {
    return this.byDigest.get(keyDigest(presented));
  }

  add(key: string, record: ApiKeyRecord): Promise<boolean> {
    return Promise.resolve(this.insert(key, record));
  }

  revoke(key: string): Promise<boolean> {
    if (!this.byDigest.delete(keyDigest(key))) return Promise.resolve(false);
    this.v++;
    return Promise.resolve(true);
  }

  list(): ApiKeyRecord[] {
    return [...this.byDigest.values()];
  }

  private insert(key: string, record: ApiKeyRecord): boolean {
    const digest = keyDigest(key);
    if (this.byDigest.has(digest)) return false;
    this.byDigest.set(digest, record);
    this.v++;
    return true;
  }
}
