import { defer, tap, type MonoTypeOperatorFunction } from 'rxjs';
import { pickWeighted } from './loadbalance.js';

/** What an attempt's error says of its target's latency. */
export type AttemptVerdict =
  /** The target answered (an error the request caused): its elapsed time is a sample. */
  | 'answer'
  /** The target failed (5xx, 408, 429, transport, timeout): a sample of at least `failureSampleMs`. */
  | 'failure'
  /** The target was never asked (it cannot serve the request, its circuit refused): no sample. */
  | 'none';

export interface LeastLatencyOptions {
  /** How many children the loadbalance has (the board holds one entry each). */
  size: number;
  /** Milliseconds. */
  now: () => number;
  /** A number in [0, 1), twice per pick (the two candidates). */
  random: () => number;
  classify: (err: unknown) => AttemptVerdict;
  /** A score halves for every this many ms since the target's last sample. Default 10 s. */
  halfLifeMs?: number;
  /** The weight of a new sample in the average. Default 0.3. */
  alpha?: number;
  /** A failed attempt counts as at least this many ms. Default 10 s. */
  failureSampleMs?: number;
  /** The second candidate is taken only when its score is lower by more than this share. Default 0.1. */
  tie?: number;
}

export const LEAST_LATENCY_DEFAULTS = { halfLifeMs: 10_000, alpha: 0.3, failureSampleMs: 10_000, tie: 0.1 } as const;

/** One child's state: the average as of `at`, and the attempts running now. */
export interface LatencyEntry {
  /** Milliseconds; undefined until the first sample. */
  ewma: number | undefined;
  /** When `ewma` was last written (ms). */
  at: number;
  inFlight: number;
}

/**
 * The latency state of one loadbalance node and its power-of-two-choices picker. Memory is one entry
 * per child, whatever the traffic. Pure but for the injected `now` and `random`.
 */
export class LatencyBoard {
  readonly entries: LatencyEntry[];
  private readonly o: Required<LeastLatencyOptions>;

  constructor(options: LeastLatencyOptions) {
    this.o = { ...LEAST_LATENCY_DEFAULTS, ...options };
    this.entries = Array.from({ length: options.size }, () => ({ ewma: undefined, at: 0, inFlight: 0 }));
  }

  /** The child's average decayed to `t`: it halves every half-life without a sample. */
  latencyAt(i: number, t: number): number | undefined {
    const e = this.entries[i]!;
    if (e.ewma === undefined) return undefined;
    return e.ewma * 2 ** (-Math.max(0, t - e.at) / this.o.halfLifeMs);
  }

  /** Mix a sample (ms) into the child's average, decayed to now first. */
  record(i: number, ms: number): void {
    const t = this.o.now();
    const prev = this.latencyAt(i, t);
    const e = this.entries[i]!;
    e.ewma = prev === undefined ? ms : this.o.alpha * ms + (1 - this.o.alpha) * prev;
    e.at = t;
  }

  /**
   * Two distinct candidates drawn by weight among the children with weight > 0 (`weights` has 0 for
   * the ineligible ones), the better of them taken; -1 when none has weight.
   */
  choose(weights: readonly number[]): number {
    const first = pickWeighted(weights, this.o.random());
    if (first < 0) return -1;
    const rest = weights.slice();
    rest[first] = 0;
    const second = pickWeighted(rest, this.o.random());
    return second < 0 ? first : this.better(first, second);
  }

  /**
   * An idle child without samples is taken (every child gets tried). Otherwise the score is the
   * decayed average × (1 + in-flight), a child without samples scored with the other's average; the
   * second candidate wins only when clearly lower, so near-ties go to the first, drawn by weight.
   */
  better(a: number, b: number): number {
    const ea = this.entries[a]!;
    const eb = this.entries[b]!;
    if (ea.ewma === undefined && ea.inFlight === 0) return a;
    if (eb.ewma === undefined && eb.inFlight === 0) return b;
    const t = this.o.now();
    const la = this.latencyAt(a, t);
    const lb = this.latencyAt(b, t);
    // Neither has a sample (both busy with their first): the in-flight counts decide.
    const sa = (la ?? lb ?? 1) * (1 + ea.inFlight);
    const sb = (lb ?? la ?? 1) * (1 + eb.inFlight);
    return sb < sa * (1 - this.o.tie) ? b : a;
  }

  /**
   * Around one attempt of child `i`: counted in flight from subscription until it ends or is
   * cancelled; its latency is the time to its first value (a non-stream answer, or a stream's first
   * content) or to its error, as `classify` says. A cancelled attempt leaves no sample.
   */
  measure<T>(i: number): MonoTypeOperatorFunction<T> {
    return (source) =>
      defer(() => {
        const e = this.entries[i]!;
        const start = this.o.now();
        let measured = false;
        e.inFlight++;
        return source.pipe(
          tap({
            next: () => {
              if (measured) return;
              measured = true;
              this.record(i, this.o.now() - start);
            },
            error: (err: unknown) => {
              if (measured) return;
              measured = true;
              const verdict = this.o.classify(err);
              const ms = this.o.now() - start;
              if (verdict === 'answer') this.record(i, ms);
              else if (verdict === 'failure') this.record(i, Math.max(ms, this.o.failureSampleMs));
            },
            finalize: () => {
              e.inFlight--;
            },
          }),
        );
      });
  }
}
