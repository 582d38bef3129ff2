/** The statistics of experiment reports, on a seeded generator: the bootstrap interval and the verdict it gives. */
import { describe, expect, it } from 'vitest';
import { gaussian, mulberry32, zipf } from '../../benchmarks/experiment/random.js';
import { pairedBootstrap, quantile, verdict } from '../../benchmarks/experiment/stats.js';

describe('pairedBootstrap', () => {
  it('is the same for the same seed', () => {
    const a = [10, 12, 11, 13, 12];
    const b = [9, 9.5, 10, 10.5, 9];
    expect(pairedBootstrap(a, b, mulberry32(3))).toEqual(pairedBootstrap(a, b, mulberry32(3)));
  });

  it('brackets a clear difference away from zero, inside the range of the paired differences', () => {
    const a = [10, 12, 11, 13, 12];
    const b = [9, 9.5, 10, 10.5, 9];
    const ci = pairedBootstrap(a, b, mulberry32(1));
    expect(ci.estimate).toBeCloseTo(2, 10);
    expect(ci.includesZero).toBe(false);
    expect(ci.low).toBeGreaterThanOrEqual(1);
    expect(ci.high).toBeLessThanOrEqual(3);
    expect(ci.low).toBeLessThan(ci.estimate);
    expect(ci.high).toBeGreaterThan(ci.estimate);
  });

  it('holds zero when the differences change sign', () => {
    const ci = pairedBootstrap([10, 12, 9, 11], [11, 10, 10, 11], mulberry32(1));
    expect(ci.includesZero).toBe(true);
  });

  it('covers the true difference about 95% of the time on simulated repetitions', () => {
    const rng = mulberry32(42);
    let covered = 0;
    const trials = 300;
    for (let t = 0; t < trials; t++) {
      const a = Array.from({ length: 20 }, () => 5 + gaussian(rng));
      const b = Array.from({ length: 20 }, () => 4 + gaussian(rng));
      const ci = pairedBootstrap(a, b, rng, 500);
      if (ci.low <= 1 && 1 <= ci.high) covered++;
    }
    expect(covered / trials).toBeGreaterThan(0.88);
    expect(covered / trials).toBeLessThan(0.99);
  });

  it('leaves out pairs missing a value, and with none left says nothing', () => {
    expect(pairedBootstrap([1, NaN, 3], [0, 1, 2], mulberry32(1)).estimate).toBe(1);
    expect(pairedBootstrap([NaN], [1], mulberry32(1))).toMatchObject({ includesZero: true });
  });
});

describe('verdict', () => {
  it('names the best config when its lead holds over the runner-up, by the metric direction', () => {
    const perRep = { fast: [10, 11, 10], slow: [20, 22, 21], slowest: [40, 41, 42] };
    expect(verdict('p99', perRep, 'lower', mulberry32(1))).toMatchObject({ winner: 'fast', best: 'fast', runnerUp: 'slow' });
    expect(verdict('success', perRep, 'higher', mulberry32(1))).toMatchObject({ winner: 'slowest', runnerUp: 'slow' });
  });

  it('says no difference when the interval holds zero', () => {
    const v = verdict('p99', { a: [10, 12, 11], b: [11, 10, 12] }, 'lower', mulberry32(1));
    expect(v.winner).toBeUndefined();
    expect(v.interval.includesZero).toBe(true);
  });
});

describe('seeded draws', () => {
  it('quantile interpolates', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([5], 0.99)).toBe(5);
  });

  it('zipf draws rank 0 most, and about 1/H(n) of the time at s = 1', () => {
    const rng = mulberry32(9);
    const draw = zipf(10, 1);
    const n = 20_000;
    let zeros = 0;
    for (let i = 0; i < n; i++) if (draw(rng) === 0) zeros++;
    const h = Array.from({ length: 10 }, (_, k) => 1 / (k + 1)).reduce((a, b) => a + b);
    expect(zeros / n).toBeCloseTo(1 / h, 1);
  });
});
