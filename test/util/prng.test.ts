import { describe, expect, it } from 'vitest';
import { gaussian, seededRandom } from '../../src/util/prng.js';

describe('seededRandom (mulberry32)', () => {
  it('keeps its sequence: seeded test data and benchmark data stay the same from one version to the next', () => {
    const r = seededRandom(1);
    // the first outputs for seed 1, as 32-bit integers (pinned: a change here changes every seeded data set)
    expect([r(), r(), r()].map((x) => x * 4294967296)).toEqual([2693262067, 11749833, 2265367787]);
  });

  it('repeats for one seed, differs for another, and stays in [0, 1)', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(Array.from({ length: 1000 }, () => c())).not.toEqual(xs);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
  });
});

describe('gaussian', () => {
  it('has mean ≈ 0 and variance ≈ 1 over a seeded sample', () => {
    const g = gaussian(seededRandom(7));
    const xs = Array.from({ length: 20_000 }, g);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length;
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(variance).toBeGreaterThan(0.95);
    expect(variance).toBeLessThan(1.05);
  });
});
