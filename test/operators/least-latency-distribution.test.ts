/**
 * The least_latency picker over thousands of picks: a seeded random and a hand-moved clock, each
 * request answered before the next (so in-flight counts are 0 and the latencies alone decide).
 */
import { describe, expect, it } from 'vitest';
import { pickTwoChoices } from '../../src/operators/loadbalance.js';
import { LatencyBoard } from '../../src/state/latency-board.js';
import { seededRandom } from '../../src/util/prng.js';

/**
 * `picks` requests 10 ms apart; target i answers in `latency[i]` ms ± `jitter` (a share). The number
 * of picks each target got.
 */
function simulate(weights: number[], latency: number[], picks: number, seed: number, jitter = 0.02): number[] {
  const random = seededRandom(seed);
  const noise = seededRandom(seed + 1);
  let t = 0;
  const board = new LatencyBoard(weights.length);
  const counts = weights.map(() => 0);
  for (let n = 0; n < picks; n++) {
    const i = pickTwoChoices(weights, random, (a, b) => board.better(a, b, t));
    counts[i]!++;
    const start = t;
    board.entries[i]!.inFlight++;
    t = start + latency[i]! * (1 + jitter * (2 * noise() - 1));
    board.record(i, t - start, t);
    board.entries[i]!.inFlight--;
    t = start + 10;
  }
  return counts;
}

describe('least_latency distribution (seeded)', () => {
  it('the fast target gets the large majority of 10,000 picks, the slow one is still probed', () => {
    const [slow, fast] = simulate([1, 1], [400, 40], 10_000, 7);
    expect(slow! + fast!).toBe(10_000);
    expect(fast! / 10_000).toBeGreaterThan(0.95);
    // 100 s of traffic, half-life 10 s: probed again about every two half-lives.
    expect(slow).toBeGreaterThanOrEqual(3);
  });

  it('weights do not keep traffic on a slow target', () => {
    const [slow, fast] = simulate([9, 1], [400, 40], 10_000, 11);
    expect(fast! / 10_000).toBeGreaterThan(0.9);
    expect(slow! + fast!).toBe(10_000);
  });

  it('with equal latency the split follows the weights [1, 3] within 2 percentage points', () => {
    const counts = simulate([1, 3], [100, 100], 10_000, 20240601);
    expect(Math.abs((counts[1]! / 10_000) * 100 - 75)).toBeLessThanOrEqual(2);
  });

  it('with equal latency the split follows the weights [1, 2, 7] within 2 percentage points', () => {
    const counts = simulate([1, 2, 7], [100, 100, 100], 10_000, 99);
    const shares = counts.map((c) => (c / 10_000) * 100);
    expect(Math.abs(shares[0]! - 10)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares[1]! - 20)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares[2]! - 70)).toBeLessThanOrEqual(2);
  });

  it('among three, the two fast targets share the traffic and the slow one is left', () => {
    const [a, b, slow] = simulate([1, 1, 1], [50, 50, 500], 10_000, 3);
    expect(slow! / 10_000).toBeLessThan(0.05);
    expect(a! / 10_000).toBeGreaterThan(0.3);
    expect(b! / 10_000).toBeGreaterThan(0.3);
  });
});
