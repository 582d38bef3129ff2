import { catchError, defer, tap, throwError, type Observable } from 'rxjs';
import type { LatencyBoard } from '../state/latency-board.js';
import type { PassOver } from './fallback.js';
import { measureLatency, type AttemptVerdict } from './measure-latency.js';

export interface Weighted<T, A = void> {
  weight: number;
  /** False while the child cannot serve (its circuit is open): it is not picked. */
  eligible: () => boolean;
  run: (arg: A) => Observable<T>;
}

/** Weighted random pick among eligible children with weight > 0. Pure given `random`. */
export function pickWeighted(weights: readonly number[], random: number): number {
  let total = 0;
  for (const w of weights) total += w > 0 ? w : 0;
  if (total <= 0) return -1;
  let x = random * total;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i]!;
    if (w <= 0) continue;
    if (x < w) return i;
    x -= w;
  }
  // Floating point: random*total rounded up to total. Return the last weighted child.
  for (let i = weights.length - 1; i >= 0; i--) if (weights[i]! > 0) return i;
  return -1;
}

export interface LoadbalanceOptions<T, A = void> {
  children: readonly Weighted<T, A>[];
  /** A number in [0, 1), once per pick. */
  random: () => number;
  /** The error when no child is eligible (their circuits are open). */
  noneEligible: () => Error;
  passOver?: PassOver;
  /**
   * Pick by latency instead (strategy.algorithm "least_latency"): two candidates drawn by weight, the
   * better on `board` taken (`pickTwoChoices`), each attempt measured onto it (`measureLatency`).
   */
  leastLatency?: { board: LatencyBoard; now: () => number; classify: (err: unknown) => AttemptVerdict };
}

/**
 * Power of two choices: two distinct candidates drawn by weight (`random` twice), `better` picks one;
 * the only candidate when one has weight; -1 when none has.
 */
export function pickTwoChoices(weights: readonly number[], random: () => number, better: (a: number, b: number) => number): number {
  const first = pickWeighted(weights, random());
  if (first < 0) return -1;
  const rest = weights.slice();
  rest[first] = 0;
  const second = pickWeighted(rest, random());
  return second < 0 ? first : better(first, second);
}

/**
 * Send the request to one child, chosen per subscription by weight among the eligible ones (or by
 * latency, with `leastLatency`). With `passOver`, a picked child that cannot serve the request (it
 * was never asked) is set aside and another is picked; when every weighted child was set aside,
 * `passOver.none` of their errors is the answer (`noneEligible` when some were left out only because
 * their circuit is open). Built once (per plan); the returned function is called with `arg`, the
 * request's context.
 */
export function loadbalance<T, A = void>(o: LoadbalanceOptions<T, A>): (arg: A) => Observable<T> {
  const { children, random, noneEligible, passOver, leastLatency: ll } = o;
  const weighted = children.filter((c) => c.weight > 0).length;
  const better = ll && ((a: number, b: number): number => ll.board.better(a, b, ll.now()));
  const choose = (weights: readonly number[]): number => (better ? pickTwoChoices(weights, random, better) : pickWeighted(weights, random()));
  return (arg) =>
    defer(() => {
      const weights = children.map((c) => (c.weight > 0 && c.eligible() ? c.weight : 0));
      let emitted = false;
      let passed: unknown[] | undefined;
      const pick = (): Observable<T> => {
        const i = choose(weights);
        if (i < 0) return throwError(() => (passOver && passed?.length === weighted ? passOver.none(passed) : noneEligible()));
        const run = ll ? children[i]!.run(arg).pipe(measureLatency<T>({ ...ll, index: i })) : children[i]!.run(arg);
        if (!passOver) return run;
        return run.pipe(
          tap(() => {
            emitted = true;
          }),
          catchError((err: unknown) => {
            if (emitted || !passOver.test(err)) throw err;
            (passed ??= []).push(err);
            weights[i] = 0;
            return pick();
          }),
        );
      };
      return pick();
    });
}
