import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export interface ApiKeyRecord {
  name: string;
  workspace_id?: string;
  organisation_id?: string;
}

interface Stored {
  hash: Buffer;
  record: ApiKeyRecord;
}

const sha256 = (s: string): Buffer => hash('sha256', s, 'buffer');

/**
 * Gateway keys, stored only as SHA-256 digests. A presented key is hashed and compared with every
 * stored digest in constant time, without an early exit, so timing tells nothing about which
 * digest (or which prefix) matched. Keys are high-entropy tokens, so a fast hash is the right one.
 */
export class ApiKeyStore {
  private readonly keys: Stored[] = [];

  add(key: string, record: ApiKeyRecord): void {
    this.keys.push({ hash: sha256(key), record });
  }

  get size(): number {
    return this.keys.length;
  }

  verify(presented: string): ApiKeyRecord | undefined {
    const h = sha256(presented);
    let found: ApiKeyRecord | undefined;
    for (const k of this.keys) {
      if (timingSafeEqual(h, k.hash) && found === undefined) found = k.record;
    }
    return found;
  }
}

export function generateApiKey(): string {
  return `sk-sluice-${randomBytes(24).toString('base64url')}`;
}
