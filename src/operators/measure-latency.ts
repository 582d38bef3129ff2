import { defer, tap, type MonoTypeOperatorFunction } from 'rxjs';
import type { LatencyBoard } from '../state/latency-board.js';

/** What an attempt's error says of its target's latency. */
export type AttemptVerdict =
  /** The target answered (an error the request caused): its elapsed time is a sample. */
  | 'answer'
  /** The target failed (5xx, 408, 429, transport, timeout): a sample of at least the board's failure sample. */
  | 'failure'
  /** The target was never asked or not timed (it cannot serve the request, its circuit refused): no sample. */
  | 'none';

export interface MeasureLatencyOptions {
  board: LatencyBoard;
  /** The child of the board this attempt runs on. */
  index: number;
  /** Milliseconds. */
  now: () => number;
  classify: (err: unknown) => AttemptVerdict;
}

/**
 * One attempt on a loadbalance child, recorded on its latency board: counted in flight from
 * subscription until it ends or is cancelled; its sample is the time to its first value (a non-stream
 * answer, or a stream's first content) or to its error, as `classify` says. A cancelled attempt
 * leaves no sample.
 */
export function measureLatency<T>(o: MeasureLatencyOptions): MonoTypeOperatorFunction<T> {
  const { board, index, now, classify } = o;
  return (source) =>
    defer(() => {
      const e = board.entries[index]!;
      const start = now();
      let measured = false;
      e.inFlight++;
      return source.pipe(
        tap({
          next: () => {
            if (measured) return;
            measured = true;
            const t = now();
            board.record(index, t - start, t);
          },
          error: (err: unknown) => {
            if (measured) return;
            measured = true;
            const verdict = classify(err);
            const t = now();
            if (verdict !== 'none') board.record(index, t - start, t, verdict === 'failure');
          },
          finalize: () => {
            e.inFlight--;
          },
        }),
      );
    });
}
