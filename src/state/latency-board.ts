/**
 * The latency state of one least_latency loadbalance (docs/routing.md#least-latency): per child, an
 * average of its latency that decays with time, and its attempts in flight. Memory is one entry per
 * child, whatever the traffic. Pure: every time is passed in (milliseconds).
 */

export interface LatencyBoardOptions {
  /** An average halves for every this many ms without a sample. Default 10 s. */
  halfLifeMs?: number;
  /** The weight of a new sample in the average. Default 0.3. */
  alpha?: number;
  /** A failed attempt counts as at least this many ms. Default 10 s. */
  failureSampleMs?: number;
  /** The second candidate wins only when its score is lower by more than this share. Default 0.1. */
  tie?: number;
}

export const LATENCY_BOARD_DEFAULTS: Required<LatencyBoardOptions> = { halfLifeMs: 10_000, alpha: 0.3, failureSampleMs: 10_000, tie: 0.1 };

/** One child's state: the average as of `at`, and the attempts running now. */
export interface LatencyEntry {
  /** Milliseconds; undefined until the first sample. */
  ewma: number | undefined;
  /** When `ewma` was last written. */
  at: number;
  inFlight: number;
}

export class LatencyBoard {
  readonly entries: LatencyEntry[];
  readonly options: Required<LatencyBoardOptions>;

  constructor(size: number, options: LatencyBoardOptions = {}) {
    this.options = { ...LATENCY_BOARD_DEFAULTS, ...options };
    this.entries = Array.from({ length: size }, () => ({ ewma: undefined, at: 0, inFlight: 0 }));
  }

  /** The child's average decayed to `t`: it halves every half-life without a sample. */
  latencyAt(i: number, t: number): number | undefined {
    const e = this.entries[i]!;
    if (e.ewma === undefined) return undefined;
    return e.ewma * 2 ** (-Math.max(0, t - e.at) / this.options.halfLifeMs);
  }

  /** Mix a sample into the child's average, decayed to `t` first. A failure counts as at least `failureSampleMs`. */
  record(i: number, ms: number, t: number, failed = false): void {
    const x = failed ? Math.max(ms, this.options.failureSampleMs) : ms;
    const prev = this.latencyAt(i, t);
    const e = this.entries[i]!;
    e.ewma = prev === undefined ? x : this.options.alpha * x + (1 - this.options.alpha) * prev;
    e.at = t;
  }

  /**
   * The better of candidates `a` (drawn first) and `b` at time `t`. An idle child without samples is
   * taken (every child gets tried). Otherwise the score is the decayed average × (1 + in flight), a
   * child without samples scored with the other's average; `b` wins only when clearly lower, so
   * near-ties go to `a`.
   */
  better(a: number, b: number, t: number): number {
    const ea = this.entries[a]!;
    const eb = this.entries[b]!;
    if (ea.ewma === undefined && ea.inFlight === 0) return a;
    if (eb.ewma === undefined && eb.inFlight === 0) return b;
    const la = this.latencyAt(a, t);
    const lb = this.latencyAt(b, t);
    // Neither has a sample (both busy with their first): the in-flight counts decide.
    const sa = (la ?? lb ?? 1) * (1 + ea.inFlight);
    const sb = (lb ?? la ?? 1) * (1 + eb.inFlight);
    return sb < sa * (1 - this.options.tie) ? b : a;
  }
}
