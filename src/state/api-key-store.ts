import type { ApiKeyRecord } from '../security/api-keys.js';

/**
 * Gateway keys (x-gateway-api-key), kept only as digests: no adapter stores, returns or logs a key.
 * Reads are synchronous and local (`verify` runs on every request; a shared adapter keeps a local
 * mirror, as the breakers do); writes may go over the network, so they return promises.
 */
export interface ApiKeyStore {
  /** The record of a presented key, or undefined. Must not reveal through its timing which key, or which part of one, matched. */
  verify(presented: string): ApiKeyRecord | undefined;
  /** Adds a key; false (and the first record kept) when the key is already stored. */
  add(key: string, record: ApiKeyRecord): Promise<boolean>;
  /** Removes a key: the next request presenting it is a 401. False when it was not stored. */
  revoke(key: string): Promise<boolean>;
  /** The records of every stored key (never the keys). */
  list(): ApiKeyRecord[];
  readonly size: number;
  /** Grows on every change (add, revoke). */
  readonly version: number;
}
