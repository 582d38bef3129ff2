import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey, type ApiKeyRecord } from '../../src/security/api-keys.js';
import type { ApiKeyStore, MadeKeyRecord } from '../../src/state/api-key-store.js';

export interface ApiKeyStoreHarness {
  store: ApiKeyStore;
  /** Every string the adapter holds or wrote (its own fields; with Redis, the raw values too): no key may be in it. */
  internals(): Promise<string>;
  cleanup?(): Promise<void>;
}

export const DECLARED_A = 'sk-sluice-fake-key-aaaaaaaaaaaaaaaaaaaa';
export const DECLARED_B = 'sk-sluice-fake-key-bbbbbbbbbbbbbbbbbbbb';
export const DECLARED: { key: string; record: ApiKeyRecord }[] = [
  { key: DECLARED_A, record: { name: 'team-a', workspace_id: 'ws-a' } },
  { key: DECLARED_B, record: { name: 'team-b', organisation_id: 'org-b', scopes: ['admin'] } },
  { key: DECLARED_A, record: { name: 'team-a-again' } },
];

let seq = 0;
export function made(name: string, extra: Partial<MadeKeyRecord> = {}): MadeKeyRecord {
  return { id: randomUUID(), name, created_at: new Date(1_700_000_000_000 + seq++ * 1000).toISOString(), hint: 'sk-sluice-…abcd', ...extra };
}

/** Every string reachable from an object's own fields (Maps and Sets included), latin1 map keys as Buffers. */
export function internalsOf(o: object): string {
  return JSON.stringify(o, (_k, v: unknown) => {
    if (v instanceof Map) return { map: [...v.entries()].map(([k, e]) => [Buffer.from(String(k), 'latin1'), e]) };
    if (v instanceof Set) return { set: [...v].map((k) => Buffer.from(String(k), 'latin1')) };
    if (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)) {
      const b = Buffer.from((v as { data: number[] }).data);
      return { utf8: b.toString('utf8'), latin1: b.toString('latin1'), hex: b.toString('hex'), base64: b.toString('base64') };
    }
    return v;
  });
}

/** The behaviour every ApiKeyStore shares, run against each adapter (declared keys: DECLARED). */
export function apiKeyStoreContract(name: string, make: () => Promise<ApiKeyStoreHarness>): void {
  describe(`ApiKeyStore contract: ${name}`, () => {
    let h: ApiKeyStoreHarness;
    let s: ApiKeyStore;
    beforeEach(async () => {
      h = await make();
      s = h.store;
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it('verifies declared keys (a repeated one keeps its first record), and lists none of them', () => {
      expect(s.verify(DECLARED_A)).toEqual({ name: 'team-a', workspace_id: 'ws-a' });
      expect(s.verify(DECLARED_B)).toEqual({ name: 'team-b', organisation_id: 'org-b', scopes: ['admin'] });
      expect(s.size).toBe(2);
      expect(s.list()).toEqual([]);
    });

    it.each([
      ['an unknown key', 'sk-sluice-fake-key-cccccccccccccccccccc'],
      ['a prefix of a real key', DECLARED_A.slice(0, -1)],
      ['a real key plus a character', `${DECLARED_A}a`],
      ['a key with different case', DECLARED_A.toUpperCase()],
      ['a key with surrounding spaces', ` ${DECLARED_A} `],
      ['the empty string', ''],
    ])('returns undefined for %s', (_label, presented) => {
      expect(s.verify(presented)).toBeUndefined();
    });

    it('a made key verifies at once, is listed and found by id; revoked by id, it no longer verifies', async () => {
      const k = generateApiKey();
      const r = made('ci', { workspace_id: 'ws-a' });
      expect(s.verify(k)).toBeUndefined();
      expect(await s.add(k, r)).toBe(true);
      expect(s.verify(k)).toEqual(r);
      expect(s.get(r.id)).toEqual(r);
      expect(s.list()).toEqual([r]);
      expect(s.size).toBe(3);
      expect(await s.revoke(r.id)).toEqual(r);
      expect(s.verify(k)).toBeUndefined();
      expect(s.get(r.id)).toBeUndefined();
      expect(s.list()).toEqual([]);
      expect(await s.revoke(r.id)).toBeUndefined();
      expect(s.verify(DECLARED_A)).toBeDefined();
    });

    it('refuses to add a key already stored, declared or made (the first record stays)', async () => {
      expect(await s.add(DECLARED_A, made('shadow'))).toBe(false);
      expect(s.verify(DECLARED_A)!.name).toBe('team-a');
      const k = generateApiKey();
      const first = made('first');
      expect(await s.add(k, first)).toBe(true);
      expect(await s.add(k, made('second'))).toBe(false);
      expect(s.verify(k)).toEqual(first);
      expect(s.list()).toEqual([first]);
    });

    it('declared keys have no id: revoke and get by anything find nothing', async () => {
      expect(await s.revoke('team-a')).toBeUndefined();
      expect(await s.revoke('')).toBeUndefined();
      expect(s.get('team-a')).toBeUndefined();
      expect(s.verify(DECLARED_A)).toBeDefined();
    });

    it('lists made keys oldest first', async () => {
      const rs = [made('one'), made('two'), made('three')];
      for (const r of [rs[1]!, rs[2]!, rs[0]!]) await s.add(generateApiKey(), r);
      expect(s.list().map((r) => r.name)).toEqual(['one', 'two', 'three']);
    });

    it('moves its version on every change and only then', async () => {
      const v0 = s.version;
      await s.add(DECLARED_A, made('dup'));
      s.verify(DECLARED_A);
      await s.revoke(randomUUID());
      expect(s.version).toBe(v0);
      const r = made('x');
      await s.add(generateApiKey(), r);
      const v1 = s.version;
      expect(v1).toBeGreaterThan(v0);
      await s.revoke(r.id);
      expect(s.version).toBeGreaterThan(v1);
    });

    it('holds no key in any encoding: only digests and records', async () => {
      const k = generateApiKey();
      await s.add(k, made('later'));
      const text = await h.internals();
      expect(text).toContain('later');
      for (const key of [DECLARED_A, DECLARED_B, k]) {
        expect(text).not.toContain(key);
        expect(text).not.toContain(Buffer.from(key).toString('hex'));
        expect(text).not.toContain(Buffer.from(key).toString('base64'));
        expect(text).not.toContain(key.slice(-20));
        expect(JSON.stringify(s.list())).not.toContain(key.slice(-20));
      }
    });
  });
}
