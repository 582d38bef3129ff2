import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CacheStore } from '../../src/state/cache-store.js';

export interface CacheStoreHarness {
  store: CacheStore;
  /**
   * Let `ms` pass for the store's clock. A store with an injected clock moves it; a store on real
   * time (Redis) waits: expiry has no event to wait on.
   */
  advance(ms: number): Promise<void>;
  cleanup?(): Promise<void>;
}

/** The behaviour every CacheStore shares, run against each adapter. */
export function cacheStoreContract(name: string, makeStore: () => Promise<CacheStoreHarness>): void {
  describe(`CacheStore contract: ${name}`, () => {
    let h: CacheStoreHarness;
    beforeEach(async () => {
      h = await makeStore();
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it('an unknown key is undefined', async () => {
      expect(await h.store.get('nope')).toBeUndefined();
    });

    it('returns what was set, byte for byte (unicode, newlines, JSON)', async () => {
      const value = JSON.stringify({ text: 'héllo 🌍 — «ok»\r\n', n: [1, 2, 3] });
      await h.store.set('k1', value, 60);
      expect(await h.store.get('k1')).toBe(value);
    });

    it('a second set replaces the value', async () => {
      await h.store.set('k', 'one', 60);
      await h.store.set('k', 'two', 60);
      expect(await h.store.get('k')).toBe('two');
    });

    it('keys are independent, including keys that share a prefix', async () => {
      await h.store.set('a', '1', 60);
      await h.store.set('ab', '2', 60);
      await h.store.set('a:b', '3', 60);
      expect(await h.store.get('a')).toBe('1');
      expect(await h.store.get('ab')).toBe('2');
      expect(await h.store.get('a:b')).toBe('3');
    });

    it('delete removes the key; deleting an unknown key is harmless', async () => {
      await h.store.set('k', 'v', 60);
      await h.store.delete('k');
      expect(await h.store.get('k')).toBeUndefined();
      await expect(h.store.delete('never-set')).resolves.toBeUndefined();
    });

    it('an empty string is a value, not a miss', async () => {
      await h.store.set('empty', '', 60);
      expect(await h.store.get('empty')).toBe('');
    });

    it('a large value (200 KB) round-trips', async () => {
      const big = 'x'.repeat(100_000) + 'é'.repeat(100_000);
      await h.store.set('big', big, 60);
      expect(await h.store.get('big')).toBe(big);
    });

    it('an entry expires after its time to live, not before', async () => {
      await h.store.set('short', 'v', 0.2);
      await h.store.set('long', 'v', 60);
      expect(await h.store.get('short')).toBe('v');
      await h.advance(300);
      expect(await h.store.get('short')).toBeUndefined();
      expect(await h.store.get('long')).toBe('v');
    });

    it('a zero time to live stores nothing and drops the old value', async () => {
      await h.store.set('k', 'old', 60);
      await h.store.set('k', 'new', 0);
      expect(await h.store.get('k')).toBeUndefined();
    });
  });
}
