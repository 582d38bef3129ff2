import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateApiKey, keyDigest } from '../../src/security/api-keys.js';
import { MemoryApiKeyStore } from '../../src/state/memory/api-key-store.js';

describe('keyDigest', () => {
  it('is the SHA-256 of the key, one latin1 character per byte', () => {
    const k = 'sk-sluice-fake-key-aaaaaaaaaaaaaaaaaaaa';
    expect(Buffer.from(keyDigest(k), 'latin1').equals(createHash('sha256').update(k).digest())).toBe(true);
    expect(keyDigest(k)).toHaveLength(32);
    expect(keyDigest(`${k}b`)).not.toBe(keyDigest(k));
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

  it('generates keys a store accepts back', async () => {
    const s = new MemoryApiKeyStore();
    const k = generateApiKey();
    const r = { id: 'id-1', name: 'gen', created_at: '2025-05-01T00:00:00.000Z' };
    await s.add(k, r);
    expect(s.verify(k)).toEqual(r);
    expect(s.verify(generateApiKey())).toBeUndefined();
  });
});
