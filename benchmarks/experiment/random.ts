/**
 * Seeded randomness, so that every config of an experiment meets the same arrivals, the same prompts
 * and the same faults: a 32-bit string hash, mulberry32, and the distributions the files declare.
 */
import { seededRandom } from '../../src/util/prng.js';
import type { Latency } from './schema.js';

/** A uniform [0, 1) generator. */
export type Rng = () => number;

/** FNV-1a over the parts joined: the seed of one draw (seed, provider, request, occurrence). */
export function hash32(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  const s = parts.join('\u0001');
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32 (the project's one seeded PRNG): the same seed gives the same stream. */
export const mulberry32: (seed: number) => Rng = seededRandom;

/** A standard normal draw (Box–Muller). */
export function gaussian(rng: Rng): number {
  const u = Math.max(rng(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}

/** One latency in ms from a declared distribution, never negative. */
export function sampleLatency(l: Latency, rng: Rng): number {
  let base: number;
  if (l.dist === 'fixed') base = l.ms;
  else if (l.dist === 'normal') base = l.mean_ms + l.sd_ms * gaussian(rng);
  else base = l.median_ms * Math.exp(l.sigma * gaussian(rng));
  const tail = l.tail && rng() < l.tail.p ? l.tail.ms : 0;
  return Math.max(0, base) + tail;
}

/** An exponential draw with this mean: the gap between two Poisson arrivals. */
export const exponential = (mean: number, rng: Rng): number => -Math.log(1 - rng()) * mean;

/** A Zipf(s) sampler over 0..n-1: rank k is drawn with probability ∝ 1 / (k + 1)^s. */
export function zipf(n: number, s: number): (rng: Rng) => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / Math.pow(k + 1, s);
  return (rng) => {
    const u = rng() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
