import { hash, randomBytes } from 'node:crypto';

/** What a gateway key may do besides proxying: `admin` manages every workspace (and the keys). */
export const API_KEY_SCOPES = ['admin'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export interface ApiKeyRecord {
  name: string;
  workspace_id?: string;
  organisation_id?: string;
  /** Absent or empty: the key proxies and manages its own workspace only. */
  scopes?: readonly ApiKeyScope[];
  /** Set on keys made through `POST /v1/api-keys` (never on declared ones): a random id, not derived from the key. */
  id?: string;
  created_at?: string;
  /** The key's last 4 characters (`sk-sluice-…AbCd`), to tell keys apart in a list; 24 of its 192 random bits. */
  hint?: string;
}

export function isAdmin(key: ApiKeyRecord | undefined): boolean {
  return key?.scopes?.includes('admin') === true;
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

/** What a list shows of a generated key: its prefix and last 4 characters. */
export function keyHint(key: string): string {
  return `${key.startsWith('sk-sluice-') ? 'sk-sluice-' : ''}…${key.slice(-4)}`;
}
