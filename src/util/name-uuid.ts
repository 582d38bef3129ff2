import { createHash } from 'node:crypto';

/**
 * A UUID (version 8, name-based: SHA-256 of the parts) for something declared in a file without an
 * id, so that declaring the same entry again at every start finds the same resource. `kind` keeps
 * two kinds' ids apart (`usage-limit`, `prompt`).
 */
export function nameBasedUuid(kind: string, ...parts: string[]): string {
  const h = createHash('sha256').update([kind, ...parts].join('\n')).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Is `s` a UUID (any version)? Stored resources and policies are named by one. */
export function isUuid(s: string): boolean {
  return UUID.test(s);
}
