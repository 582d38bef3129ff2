import { describe, expect, it } from 'vitest';
import { generateApiKey } from '../../../src/security/api-keys.js';
import { MemoryApiKeyStore } from '../../../src/state/memory/api-key-store.js';

const KEY_A = 'sk-sluice-fake-key-aaaaaaaaaaaaaaaaaaaa';
const KEY_B = 'sk-sluice-fake-key-bbbbbbbbbbbbbbbbbbbb';

function store(): MemoryApiKeyStore {
  return new MemoryApiKeyStore([
    { key: KEY_A, record: { name: 'team-a', workspace_id: 'ws-a' } },
    { key: KEY_B, record: { name: 'team-b', organisation_id: 'org-b' } },
  ]);
}

/** Every string reachable from the instance's own fields (Maps included), buffers as text, hex and base64. */
function internals(o: object): string {
  return JSON.stringify(o, (_k, v: unknown) => {
    if (v instanceof Map) return { map: [...v.entries()].map(([k, e]) => [Buffer.from(String(k), 'latin1'), e]) };
    if (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)) {
      const b = Buffer.from((v as { data: number[] }).data);
      return { utf8: b.toString('utf8'), latin1: b.toString('latin1'), hex: b.toString('hex'), base64: b.toString('base64') };
    }
    return v;
  });
}

describe('MemoryApiKeyStore', () => {
  it('returns the record for a stored key', () => {
    const s = store();
    expect(s.verify(KEY_A)).toEqual({ name: 'team-a', workspace_id: 'ws-a' });
    expect(s.verify(KEY_B)).toEqual({ name: 'team-b', organisation_id: 'org-b' });
    expect(s.size).toBe(2);
  });

  it.each([
    ['an unknown key', 'sk-sluice-fake-key-cccccccccccccccccccc'],
    ['a prefix of a real key', KEY_A.slice(0, -1)],
    ['a real key plus a character', `${KEY_A}a`],
    ['a key with different case', KEY_A.toUpperCase()],
    ['a key with surrounding spaces', ` ${KEY_A} `],
    ['the empty string', ''],
  ])('returns undefined for %s', (_label, presented) => {
    expect(store().verify(presented)).toBeUndefined();
  });

  it('verifies nothing when empty', () => {
    expect(new MemoryApiKeyStore().verify(KEY_A)).toBeUndefined();
    expect(new MemoryApiKeyStore().size).toBe(0);
  });

  it('keeps the first record when the same key is added twice, and says so', async () => {
    const s = new MemoryApiKeyStore([
      { key: KEY_A, record: { name: 'first' } },
      { key: KEY_A, record: { name: 'second' } },
    ]);
    expect(s.verify(KEY_A)).toEqual({ name: 'first' });
    expect(await s.add(KEY_A, { name: 'third' })).toBe(false);
    expect(s.verify(KEY_A)).toEqual({ name: 'first' });
    expect(s.size).toBe(1);
  });

  it('verifies a key added while serving, and no longer one revoked', async () => {
    const s = store();
    const k = generateApiKey();
    expect(s.verify(k)).toBeUndefined();
    expect(await s.add(k, { name: 'new' })).toBe(true);
    expect(s.verify(k)).toEqual({ name: 'new' });
    expect(await s.revoke(KEY_A)).toBe(true);
    expect(s.verify(KEY_A)).toBeUndefined();
    expect(s.verify(KEY_B)).toEqual({ name: 'team-b', organisation_id: 'org-b' });
    expect(await s.revoke(KEY_A)).toBe(false);
    expect(s.list().map((r) => r.name).sort()).toEqual(['new', 'team-b']);
  });

  it('moves its version on every change and only then', async () => {
    const s = store();
    const v0 = s.version;
    await s.add(KEY_A, { name: 'dup' });
    s.verify(KEY_A);
    expect(s.version).toBe(v0);
    await s.add(generateApiKey(), { name: 'x' });
    const v1 = s.version;
    expect(v1).toBeGreaterThan(v0);
    await s.revoke('sk-sluice-not-stored-key-000000');
    expect(s.version).toBe(v1);
    await s.revoke(KEY_B);
    expect(s.version).toBeGreaterThan(v1);
  });

  it('stores no plaintext key, and lists only records', async () => {
    const s = store();
    await s.add(`${KEY_A}-later`, { name: 'later' });
    const text = internals(s);
    // the internals are there (the digests and records), but no key in any encoding
    expect(text).toContain('team-a');
    for (const key of [KEY_A, KEY_B, `${KEY_A}-later`]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(Buffer.from(key).toString('hex'));
      expect(text).not.toContain(Buffer.from(key).toString('base64'));
      expect(text).not.toContain(key.slice(-20));
      expect(JSON.stringify(s.list())).not.toContain(key.slice(-20));
    }
    expect(JSON.stringify(s)).not.toContain(KEY_A);
  });
});
