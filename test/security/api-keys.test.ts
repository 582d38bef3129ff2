import { describe, expect, it } from 'vitest';
import { ApiKeyStore, generateApiKey } from '../../src/security/api-keys.js';

const KEY_A = 'sk-sluice-fake-key-aaaaaaaaaaaaaaaaaaaa';
const KEY_B = 'sk-sluice-fake-key-bbbbbbbbbbbbbbbbbbbb';

function store(): ApiKeyStore {
  const s = new ApiKeyStore();
  s.add(KEY_A, { name: 'team-a', workspace_id: 'ws-a' });
  s.add(KEY_B, { name: 'team-b', organisation_id: 'org-b' });
  return s;
}

/** Every string reachable from the instance's own fields, buffers included as text and hex. */
function internals(o: object): string {
  return JSON.stringify(o, (_k, v: unknown) => {
    if (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)) {
      const b = Buffer.from((v as { data: number[] }).data);
      return { utf8: b.toString('utf8'), hex: b.toString('hex'), base64: b.toString('base64') };
    }
    return v;
  });
}

describe('ApiKeyStore', () => {
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
    expect(new ApiKeyStore().verify(KEY_A)).toBeUndefined();
    expect(new ApiKeyStore().size).toBe(0);
  });

  it('returns the first record when the same key was added twice', () => {
    const s = new ApiKeyStore();
    s.add(KEY_A, { name: 'first' });
    s.add(KEY_A, { name: 'second' });
    expect(s.verify(KEY_A)).toEqual({ name: 'first' });
  });

  it('stores no plaintext key', () => {
    const s = store();
    const text = internals(s);
    // the internals are there (the digests and records), but no key in any encoding
    expect(text).toContain('team-a');
    for (const key of [KEY_A, KEY_B]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(Buffer.from(key).toString('hex'));
      expect(text).not.toContain(Buffer.from(key).toString('base64'));
      expect(text).not.toContain(key.slice(-20));
    }
    // and a plain JSON.stringify of the instance does not contain it either
    expect(JSON.stringify(s)).not.toContain(KEY_A);
  });
});

describe('generateApiKey', () => {
  it('generates long keys with the sk-sluice- prefix in a URL-safe alphabet', () => {
    const k = generateApiKey();
    expect(k).toMatch(/^sk-sluice-[A-Za-z0-9_-]{32}$/);
    expect(k.length).toBeGreaterThanOrEqual(40);
  });

  it('generates unique keys', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey()));
    expect(keys.size).toBe(1000);
  });

  it('generates keys a store accepts back', () => {
    const s = new ApiKeyStore();
    const k = generateApiKey();
    s.add(k, { name: 'gen' });
    expect(s.verify(k)).toEqual({ name: 'gen' });
    expect(s.verify(generateApiKey())).toBeUndefined();
  });
});
