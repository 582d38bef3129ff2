import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { VectorIndex } from '../../src/state/vector-index.js';
import { cosine, vectorFactory } from './vector-fixtures.js';

export interface VectorIndexHarness {
  index: VectorIndex;
  cleanup?(): Promise<void>;
}

/** A clock the contract moves; the adapter under test must read time only from it. */
export interface TestClock {
  now(): number;
}

/** The behaviour every VectorIndex shares, run against each adapter. */
export function vectorIndexContract(name: string, makeIndex: (clock: TestClock) => Promise<VectorIndexHarness>): void {
  describe(`VectorIndex contract: ${name}`, () => {
    let t = 1_700_000_000_000;
    const clock = { now: () => t };
    let h: VectorIndexHarness;
    let idx: VectorIndex;
    const f = vectorFactory(7);
    const D = 64;
    beforeEach(async () => {
      t = 1_700_000_000_000;
      h = await makeIndex(clock);
      idx = h.index;
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it('an empty index finds nothing', async () => {
      expect(await idx.search('p', f.random(D), 0.5)).toBeUndefined();
      expect(idx.size()).toBe(0);
    });

    it('finds a stored vector by itself, with a score of about 1', async () => {
      const v = f.random(D);
      await idx.add('p', 'a', v, 60);
      const m = await idx.search('p', v, 0.99);
      expect(m?.id).toBe('a');
      expect(m!.score).toBeGreaterThan(0.9999);
      expect(m!.score).toBeLessThanOrEqual(1);
      expect(idx.size()).toBe(1);
    });

    it('is cosine: length does not matter', async () => {
      const v = f.random(D);
      await idx.add('p', 'a', v, 60);
      const longer = v.map((x) => x * 7.5);
      expect((await idx.search('p', longer, 0.99))?.id).toBe('a');
    });

    it('finds a near vector above the threshold and nothing below it', async () => {
      const v = f.random(D);
      await idx.add('p', 'a', v, 60);
      const q = f.near(v, 0.97);
      const m = await idx.search('p', q, 0.95);
      expect(m?.id).toBe('a');
      expect(m!.score).toBeCloseTo(cosine(v, q), 4);
      expect(await idx.search('p', q, 0.98)).toBeUndefined();
      expect(await idx.search('p', f.random(D), 0.8)).toBeUndefined();
    });

    it('returns the most similar of several matches', async () => {
      const base = f.random(D);
      await idx.add('p', 'far', f.near(base, 0.955), 60);
      await idx.add('p', 'close', f.near(base, 0.995), 60);
      await idx.add('p', 'mid', f.near(base, 0.975), 60);
      for (let i = 0; i < 20; i++) await idx.add('p', `noise${i}`, f.random(D), 60);
      expect((await idx.search('p', base, 0.95))?.id).toBe('close');
    });

    it('keeps partitions apart', async () => {
      const v = f.random(D);
      await idx.add('model-a|ns1', 'a', v, 60);
      expect(await idx.search('model-a|ns2', v, 0.9)).toBeUndefined();
      expect(await idx.search('model-b|ns1', v, 0.9)).toBeUndefined();
      expect((await idx.search('model-a|ns1', v, 0.9))?.id).toBe('a');
    });

    it('adding an id again replaces its vector', async () => {
      const v1 = f.random(D);
      const v2 = f.random(D);
      await idx.add('p', 'a', v1, 60);
      await idx.add('p', 'a', v2, 60);
      expect(await idx.search('p', v1, 0.9)).toBeUndefined();
      expect((await idx.search('p', v2, 0.9))?.id).toBe('a');
      expect(idx.size()).toBe(1);
    });

    it('an entry expires after its time to live (on the injected clock)', async () => {
      const v = f.random(D);
      const w = f.random(D);
      await idx.add('p', 'short', v, 10);
      await idx.add('p', 'long', w, 100);
      t += 9_999;
      expect((await idx.search('p', v, 0.9))?.id).toBe('short');
      t += 1;
      expect(await idx.search('p', v, 0.9)).toBeUndefined();
      expect((await idx.search('p', w, 0.9))?.id).toBe('long');
    });

    it('a vector of another dimension count never matches', async () => {
      await idx.add('p', 'a', f.random(D), 60);
      expect(await idx.search('p', f.random(D * 2), -1)).toBeUndefined();
    });

    it('a zero vector is not stored and finds nothing', async () => {
      await idx.add('p', 'zero', new Float32Array(D), 60);
      expect(idx.size()).toBe(0);
      expect(await idx.search('p', new Float32Array(D), -1)).toBeUndefined();
    });

    it('finds near-duplicates among many entries (200 stored, 50 queries at cosine 0.96)', async () => {
      const stored: Float32Array[] = [];
      for (let i = 0; i < 200; i++) {
        stored.push(f.random(D));
        await idx.add('p', `v${i}`, stored[i]!, 60);
      }
      let hits = 0;
      for (let k = 0; k < 50; k++) {
        const i = (k * 37) % 200;
        if ((await idx.search('p', f.near(stored[i]!, 0.96), 0.95))?.id === `v${i}`) hits++;
      }
      expect(hits).toBeGreaterThanOrEqual(48);
      expect(idx.size()).toBe(200);
    });
  });
}
