import { describe, expect, it } from 'vitest';
import { LshIndex } from '../../src/state/lsh-index.js';
import { vectorFactory } from './vector-fixtures.js';

/** The LSH index alone: a pure data structure with an injected clock (both vector adapters hold one). */
describe('LshIndex', () => {
  it('finds an added vector by exact cosine, whatever its length; the score is at most 1', () => {
    const lsh = new LshIndex({ now: () => 0 });
    const f = vectorFactory(1);
    const v = f.random(64);
    expect(lsh.add('p', 'a', v, 1000)).toBe(true);
    const scaled = v.map((x) => x * 7.5);
    expect(lsh.search('p', scaled, 0.999)).toEqual({ id: 'a', score: expect.closeTo(1, 5) });
    expect(lsh.search('p', scaled, 0.999)!.score).toBeLessThanOrEqual(1);
  });

  it('copies the vector: changing the caller\'s array afterwards changes nothing', () => {
    const lsh = new LshIndex({ now: () => 0 });
    const f = vectorFactory(2);
    const v = f.random(32);
    const original = Float32Array.from(v);
    lsh.add('p', 'a', v, 1000);
    v.fill(0);
    v[0] = 1;
    expect(lsh.search('p', original, 0.999)?.id).toBe('a');
  });

  it('refuses a zero or non-finite vector and a past expiry; searching with a zero vector finds nothing', () => {
    let t = 100;
    const lsh = new LshIndex({ now: () => t });
    const f = vectorFactory(3);
    expect(lsh.add('p', 'zero', new Float32Array(8), 1000)).toBe(false);
    expect(lsh.add('p', 'nan', Float32Array.from([1, NaN, 0, 0]), 1000)).toBe(false);
    expect(lsh.add('p', 'past', f.random(8), 100)).toBe(false);
    expect(lsh.size).toBe(0);
    expect(lsh.add('p', 'ok', f.random(8), 101)).toBe(true);
    expect(lsh.search('p', new Float32Array(8), 0)).toBeUndefined();
    t = 101;
    expect(lsh.has('p', 'ok')).toBe(false);
  });

  it('keeps partitions apart, and vectors of different lengths apart within one', () => {
    const lsh = new LshIndex({ now: () => 0 });
    const f = vectorFactory(4);
    const v = f.random(16);
    lsh.add('p1', 'a', v, 1000);
    expect(lsh.search('p2', v, 0.5)).toBeUndefined();
    const longer = new Float32Array(32);
    longer.set(v);
    expect(lsh.search('p1', longer, 0.5)).toBeUndefined();
    lsh.add('p1', 'b', longer, 1000);
    expect(lsh.search('p1', longer, 0.99)?.id).toBe('b');
    expect(lsh.search('p1', v, 0.99)?.id).toBe('a');
  });

  it('returns the most similar entry at or above the threshold', () => {
    const lsh = new LshIndex({ now: () => 0 });
    const f = vectorFactory(5);
    const base = f.random(64);
    lsh.add('p', 'far', f.near(base, 0.955), 1000);
    lsh.add('p', 'close', f.near(base, 0.995), 1000);
    lsh.add('p', 'mid', f.near(base, 0.975), 1000);
    expect(lsh.search('p', base, 0.95)?.id).toBe('close');
    expect(lsh.search('p', f.near(base, 0.5), 0.95)).toBeUndefined();
  });

  it('add replaces an id; delete, has and expiresAt see live entries only', () => {
    let t = 0;
    const lsh = new LshIndex({ now: () => t });
    const f = vectorFactory(6);
    const a = f.random(16);
    const b = f.random(16);
    lsh.add('p', 'x', a, 500);
    lsh.add('p', 'x', b, 800);
    expect(lsh.size).toBe(1);
    expect(lsh.search('p', a, 0.99)).toBeUndefined();
    expect(lsh.search('p', b, 0.99)?.id).toBe('x');
    expect(lsh.has('p', 'x')).toBe(true);
    expect(lsh.expiresAt('p', 'x')).toBe(800);
    expect(lsh.expiresAt('q', 'x')).toBeUndefined();
    t = 800;
    expect(lsh.has('p', 'x')).toBe(false);
    expect(lsh.expiresAt('p', 'x')).toBeUndefined();
    t = 0;
    expect(lsh.delete('p', 'x')).toBe(true);
    expect(lsh.delete('p', 'x')).toBe(false);
    expect(lsh.size).toBe(0);
  });

  it('prune drops every expired entry at once and says how many', () => {
    let t = 0;
    const lsh = new LshIndex({ now: () => t });
    const f = vectorFactory(7);
    for (let i = 0; i < 5; i++) lsh.add('p', `short${i}`, f.random(8), 100);
    lsh.add('p', 'long', f.random(8), 1000);
    t = 100;
    expect(lsh.prune()).toBe(5);
    expect(lsh.size).toBe(1);
  });

  it('is bounded across partitions: beyond maxEntries the oldest is evicted', () => {
    const lsh = new LshIndex({ now: () => 0, maxEntries: 2 });
    const f = vectorFactory(8);
    const vs = [f.random(16), f.random(16), f.random(16)];
    lsh.add('p1', 'a', vs[0]!, 1000);
    lsh.add('p2', 'b', vs[1]!, 1000);
    lsh.add('p1', 'c', vs[2]!, 1000);
    expect(lsh.size).toBe(2);
    expect(lsh.has('p1', 'a')).toBe(false);
    expect(lsh.search('p2', vs[1]!, 0.99)?.id).toBe('b');
    expect(lsh.search('p1', vs[2]!, 0.99)?.id).toBe('c');
  });

  it('rejects impossible options', () => {
    expect(() => new LshIndex({ bits: 31 })).toThrow(/bits/);
    expect(() => new LshIndex({ tables: 0 })).toThrow(/tables/);
    expect(() => new LshIndex({ maxEntries: 0 })).toThrow(/maxEntries/);
  });

  it('hashes alike for one seed: two instances find the same candidates (the Redis mirrors rely on it)', () => {
    const f = vectorFactory(9);
    const stored = Array.from({ length: 300 }, () => f.random(64));
    const queries = stored.slice(0, 60).map((v) => f.near(v, 0.9));
    const found = (lsh: LshIndex) => {
      stored.forEach((v, i) => lsh.add('p', `v${i}`, v, 1000));
      // probes: 0, so a query sees exactly the buckets its own hash code names
      return queries.map((q) => lsh.search('p', q, 0.85)?.id);
    };
    const a = found(new LshIndex({ now: () => 0, tables: 2, bits: 8, probes: 0, seed: 1 }));
    const b = found(new LshIndex({ now: () => 0, tables: 2, bits: 8, probes: 0, seed: 1 }));
    const c = found(new LshIndex({ now: () => 0, tables: 2, bits: 8, probes: 0, seed: 2 }));
    expect(b).toEqual(a);
    expect(c).not.toEqual(a); // another seed: other hyperplanes, another set of misses
    expect(a.filter((id) => id !== undefined).length).toBeGreaterThan(0);
  });

  it('drops expired entries lazily (a search that meets one removes it)', async () => {
    let t = 0;
    const f = vectorFactory(8);
    const lsh = new LshIndex({ now: () => t });
    const v = f.random(32);
    expect(lsh.add('p', 'a', v, 1000)).toBe(true);
    t = 1000;
    expect(lsh.size).toBe(1);
    expect(lsh.search('p', v, 0.5)).toBeUndefined();
    expect(lsh.size).toBe(0);
    expect(lsh.add('p', 'late', v, 1000)).toBe(false); // already expired
  });

  it('recall ≥ 0.95 for near-duplicates (cosine ≥ 0.95) at 100,000 × 256 dims; no false matches; reports p50/p99', { timeout: 180_000 }, () => {
    const N = 100_000;
    const D = 256;
    const f = vectorFactory(2024);
    const lsh = new LshIndex();
    const stored: Float32Array[] = new Array(N);
    for (let i = 0; i < N; i++) {
      stored[i] = f.random(D);
      lsh.add('one', `v${i}`, stored[i]!, Infinity);
    }
    expect(lsh.size).toBe(N);

    const times: number[] = [];
    const search = (q: Float32Array, threshold: number) => {
      const s = performance.now();
      const m = lsh.search('one', q, threshold);
      times.push(performance.now() - s);
      return m;
    };
    // 500 at the edge (cosine 0.9505 against threshold 0.95), 500 spread over [0.95, 1)
    let edgeHits = 0;
    let spreadHits = 0;
    for (let k = 0; k < 1000; k++) {
      const i = Math.floor(f.uniform() * N);
      const edge = k < 500;
      const cos = edge ? 0.9505 : 0.95 + 0.0499 * f.uniform();
      const m = search(f.near(stored[i]!, cos), 0.95);
      if (m) expect(m.id).toBe(`v${i}`); // a match is always the right one
      if (m?.id === `v${i}`) {
        if (edge) edgeHits++;
        else spreadHits++;
      }
    }
    // unrelated queries find nothing
    let falseMatches = 0;
    for (let k = 0; k < 200; k++) if (search(f.random(D), 0.95)) falseMatches++;

    const sorted = [...times].sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
    console.log(
      `LshIndex 100k×256: recall edge(0.9505)=${edgeHits / 500} spread[0.95,1)=${spreadHits / 500}; ` +
        `search p50=${pct(50).toFixed(3)} ms p99=${pct(99).toFixed(3)} ms (timing not asserted)`,
    );
    expect(edgeHits / 500).toBeGreaterThanOrEqual(0.95);
    expect(spreadHits / 500).toBeGreaterThanOrEqual(0.95);
    expect(falseMatches).toBe(0);
  });
});
