/**
 * The statistics of a report: percentiles, and the paired bootstrap over repetitions that names a
 * winner per metric (docs/decisions/0021-experiment-statistics.md says why this way).
 */
import type { Rng } from './random.js';

/** The q-quantile (0..1) of xs by linear interpolation; NaN for none. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

export const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

export interface Interval {
  /** The mean of the paired differences a − b. */
  estimate: number;
  low: number;
  high: number;
  /** The interval holds zero: the repetitions cannot tell the two apart. */
  includesZero: boolean;
}

/**
 * A percentile bootstrap interval of mean(a − b) over paired repetitions (a[i] and b[i] ran in the
 * same round; a pair missing either value is left out): `resamples` draws of the rounds with replacement, the `level` central interval of
 * their means. Differences that are all equal give that difference as the interval.
 */
export function pairedBootstrap(a: readonly number[], b: readonly number[], rng: Rng, resamples = 2000, level = 0.95): Interval {
  const d = a.map((x, i) => x - b[i]!).filter((x) => Number.isFinite(x));
  const n = d.length;
  if (n === 0) return { estimate: NaN, low: NaN, high: NaN, includesZero: true };
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += d[Math.floor(rng() * n)]!;
    means[r] = sum / n;
  }
  const sorted = [...means].sort((x, y) => x - y);
  const low = quantile(sorted, (1 - level) / 2);
  const high = quantile(sorted, 1 - (1 - level) / 2);
  return { estimate: mean(d), low, high, includesZero: low <= 0 && high >= 0 };
}

export interface Verdict {
  metric: string;
  /** The best config by the mean over repetitions, or undefined when the interval holds zero. */
  winner: string | undefined;
  best: string;
  runnerUp: string;
  interval: Interval;
}

/**
 * Which config wins a metric: the best mean against the runner-up, by the paired bootstrap of their
 * difference. `perRep[config]` holds one value per repetition, in round order.
 */
export function verdict(metric: string, perRep: Record<string, readonly number[]>, better: 'lower' | 'higher', rng: Rng): Verdict {
  const sign = better === 'lower' ? 1 : -1;
  const ranked = Object.entries(perRep)
    .filter(([, xs]) => xs.some((x) => Number.isFinite(x)))
    .sort(([, x], [, y]) => sign * (mean(x) - mean(y)));
  if (ranked.length === 0) return { metric, winner: undefined, best: '–', runnerUp: '–', interval: pairedBootstrap([], [], rng) };
  const [best, runnerUp] = [ranked[0]!, ranked[1] ?? ranked[0]!];
  const interval = pairedBootstrap(best[1], runnerUp[1], rng);
  return { metric, winner: interval.includesZero ? undefined : best[0], best: best[0], runnerUp: runnerUp[0], interval };
}
