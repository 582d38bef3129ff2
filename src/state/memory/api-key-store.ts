import { keyDigest, type ApiKeyRecord } from '../../security/api-keys.js';
import { KeyRing, type ApiKeyStore, type MadeKeyRecord } from '../api-key-store.js';

/** Gateway keys in this process only, by SHA-256 digest (see `KeyRing`): made keys are lost on restart. */
export class MemoryApiKeyStore implements ApiKeyStore {
  private readonly ring: KeyRing;

  constructor(declared: Iterable<{ key: string; record: ApiKeyRecord }> = []) {
    this.ring = new KeyRing(declared);
  }

  get size(): number {
    return this.ring.size;
  }

  get version(): number {
    return this.ring.version;
  }

  verify(presented: string): ApiKeyRecord | undefined {
    return this.ring.verify(presented);
  }

  add(key: string, record: MadeKeyRecord): Promise<boolean> {
    const d = keyDigest(key);
    return Promise.resolve(!this.ring.has(d) && this.ring.put(d, record));
  }

  revoke(id: string): Promise<MadeKeyRecord | undefined> {
    const d = this.ring.digestOf(id);
    return Promise.resolve(d === undefined ? undefined : this.ring.remove(d));
  }

  get(id: string): MadeKeyRecord | undefined {
    return this.ring.get(id);
  }

  list(): MadeKeyRecord[] {
    return this.ring.list();
  }
}
