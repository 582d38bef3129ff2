import { hash, randomBytes } from 'node:crypto';

export interface ApiKeyRecord {
  name: string;
  workspace_id?: string;
  organisation_id?: string;
}

/**
 * A gateway key's SHA-256 digest, the only form in which a key is stored, as a 32-character latin1
 * string (one character per byte: a Map key, and ~2.5× cheaper to make than a Buffer). Keys are
 * high-entropy tokens (≥ 16 characters; generated ones carry 192 bits), so a fast hash is the right one.
 */
export function keyDigest(key: string): string {
  return hash('sha256', key, 'binary'); // 'binary' is latin1
}

export function generateApiKey(): string {
  return `sk-sluice-${randomBytes(24).toString('base64url')}`;
}
