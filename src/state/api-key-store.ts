import { keyDigest, type ApiKeyRecord } from '../security/api-keys.js';

/** A key made through the store (`POST /v1/api-keys`): its record has an id. */
export type MadeKeyRecord = ApiKeyRecord & { id: string; created_at: string };

/**
 * Gateway keys (x-gateway-api-key), kept only as digests: no adapter stores, returns or logs a key.
 * Two kinds: keys *declared* by the operator (`GATEWAY_API_KEYS`, the bootstrap file, the generated
 * one), handed to the adapter at construction and kept in this process only (never written to a
 * shared store: they are each instance's own configuration), and keys *made* while serving (`add`),
 * which the adapter stores (memory: this process; Redis: every instance, across restarts).
 *
 * Reads are synchronous and local (`verify` runs on every request; a shared adapter keeps a local
 * mirror, as the breakers do); writes may go over the network, so they return promises.
 */
export interface ApiKeyStore {
  /** The record of a presented key, or undefined. Must not reveal through its timing which key, or which part of one, matched. */
  verify(presented: string): ApiKeyRecord | undefined;
  /** Stores a made key; false (nothing written) when the key is already stored, declared or made. */
  add(key: string, record: MadeKeyRecord): Promise<boolean>;
  /** Revokes the made key with that id: the next request presenting it is a 401. Undefined when no made key has it. */
  revoke(id: string): Promise<MadeKeyRecord | undefined>;
  /** A made key's record by its id. */
  get(id: string): MadeKeyRecord | undefined;
  /** The records of the made keys (never the keys), oldest first. Declared keys are not listed. */
  list(): MadeKeyRecord[];
  /** Keys that verify: declared and made. */
  readonly size: number;
  /** Grows on every change (add, revoke, another instance's write seen). */
  readonly version: number;
}

/**
 * The keys held in memory by digest: the whole memory adapter's state, and the Redis adapter's local
 * mirror. `verify` hashes the presented key and looks the digest up in one Map: one hash and one
 * lookup, however many keys are stored.
 *
 * Why this is constant-time where it matters: the only thing compared is the digest, never the key.
 * The Map's string comparison may stop at the first differing byte, so its timing could say how much
 * of a stored digest a guess's digest shares; that gives nothing towards a key that hashes to it
 * (finding one is a SHA-256 preimage). A `timingSafeEqual` of the digest after the lookup would
 * compare two values the lookup already found equal, and needs Buffers, which cost more than the
 * whole lookup here, so there is none.
 */
export class KeyRing {
  /** digest (latin1) → record, declared and made */
  private readonly byDigest = new Map<string, ApiKeyRecord>();
  /** made keys: id → digest */
  private readonly byId = new Map<string, string>();
  private readonly declared = new Set<string>();
  private v = 0;

  /** Declared keys; a repeated key keeps its first record. */
  constructor(declared: Iterable<{ key: string; record: ApiKeyRecord }> = []) {
    for (const { key, record } of declared) {
      const d = keyDigest(key);
      if (this.byDigest.has(d)) continue;
      this.byDigest.set(d, record);
      this.declared.add(d);
    }
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

  has(digest: string): boolean {
    return this.byDigest.has(digest);
  }

  isDeclared(digest: string): boolean {
    return this.declared.has(digest);
  }

  digestOf(id: string): string | undefined {
    return this.byId.get(id);
  }

  get(id: string): MadeKeyRecord | undefined {
    const d = this.byId.get(id);
    return d === undefined ? undefined : (this.byDigest.get(d) as MadeKeyRecord);
  }

  list(): MadeKeyRecord[] {
    const out: MadeKeyRecord[] = [];
    for (const d of this.byId.values()) out.push(this.byDigest.get(d) as MadeKeyRecord);
    return out.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
  }

  /** Puts (or replaces) a made key; false when the digest is a declared key's (which stays). */
  put(digest: string, record: MadeKeyRecord): boolean {
    if (this.declared.has(digest)) return false;
    const old = this.byDigest.get(digest) as MadeKeyRecord | undefined;
    if (old !== undefined) this.byId.delete(old.id);
    this.byDigest.set(digest, record);
    this.byId.set(record.id, digest);
    this.v++;
    return true;
  }

  /** Removes a made key (never a declared one); answers its record. */
  remove(digest: string): MadeKeyRecord | undefined {
    if (this.declared.has(digest)) return undefined;
    const old = this.byDigest.get(digest) as MadeKeyRecord | undefined;
    if (old === undefined) return undefined;
    this.byDigest.delete(digest);
    this.byId.delete(old.id);
    this.v++;
    return old;
  }

  /** Replaces every made key (a mirror's full load); declared keys stay. */
  replaceMade(entries: Iterable<readonly [digest: string, record: MadeKeyRecord]>): void {
    for (const d of [...this.byId.values()]) this.byDigest.delete(d);
    this.byId.clear();
    for (const [d, r] of entries) {
      if (this.declared.has(d)) continue;
      this.byDigest.set(d, r);
      this.byId.set(r.id, d);
    }
    this.v++;
  }
}
