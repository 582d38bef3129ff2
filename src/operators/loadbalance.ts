import { catchError, defer, tap, throwError, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import type { PassOver } from './fallback.js';

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
   * Another way to pick (least latency, src/operators/least-latency.ts): `choose` gets the weights (0
   * for a child that cannot be picked) and returns an index or -1; each run goes through `measure(i)`.
   * Without it, one weighted random draw per pick.
   */
  picker?: Picker;
}

export interface Picker {
  choose: (weights: readonly number[]) => number;
  measure: <T>(i: number) => MonoTypeOperatorFunction<T>;
}

/**
 * Send the request to one child, chosen per subscription by weight among the eligible ones (or by
 * `picker`). With
 * `passOver`, a picked child that cannot serve the request (it was never asked) is set aside and
 * another is picked; when every weighted child was set aside, `passOver.none` of their errors is the
 * answer (`noneEligible` when some were left out only because their circuit is open). Built once (per
 * plan); the returned function is called with `arg`, the request's context.
 */
export function loadbalance<T, A = void>(o: LoadbalanceOptions<T, A>): (arg: A) => Observable<T> {
  const { children, random, noneEligible, passOver, picker } = o;
  const weighted = children.filter((c) => c.weight > 0).length;
  return (arg) =>
    defer(() => {
      const weights = children.map((c) => (c.weight > 0 && c.eligible() ? c.weight : 0));
      let emitted = false;
      let passed: unknown[] | undefined;
      const pick = (): Observable<T> => {
        const i = picker ? picker.choose(weights) : pickWeighted(weights, random());
        if (i < 0) return throwError(() => (passOver && passed?.length === weighted ? passOver.none(passed) : noneEligible()));
        const run = picker ? children[i]!.run(arg).pipe(picker.measure<T>(i)) : children[i]!.run(arg);
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
