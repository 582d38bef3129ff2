import { defer, Observable, Subscription, throwError } from 'rxjs';
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

/**
 * Send the request to one child, chosen per subscription by weight among the eligible ones. With
 * `passOver`, a picked child that cannot serve the request (it was never asked) is set aside and
 * another is picked; when every weighted child was set aside, `passOver.none` of their errors is the
 * answer (`noneEligible` when some were left out only because their circuit is open).
 */
export function loadbalance<T, A = void>(
  children: readonly Weighted<T, A>[],
  random: () => number,
  noneEligible: () => Error,
  arg?: A,
  passOver?: PassOver,
): Observable<T> {
  if (!passOver) {
    return defer(() => {
      const weights = children.map((c) => (c.weight > 0 && c.eligible() ? c.weight : 0));
      const i = pickWeighted(weights, random());
      return i < 0 ? throwError(noneEligible) : children[i]!.run(arg as A);
    });
  }
  return new Observable<T>((subscriber) => {
    const weights = children.map((c) => (c.weight > 0 && c.eligible() ? c.weight : 0));
    const subs = new Subscription();
    let emitted = false;
    let passed: unknown[] | undefined;
    const pick = (): void => {
      const i = pickWeighted(weights, random());
      if (i < 0) {
        const everyWeighted = passed !== undefined && passed.length === children.filter((c) => c.weight > 0).length;
        subscriber.error(everyWeighted ? passOver.none(passed!) : noneEligible());
        return;
      }
      subs.add(
        children[i]!.run(arg as A).subscribe({
          next: (v) => {
            emitted = true;
            subscriber.next(v);
          },
          error: (err: unknown) => {
            if (emitted || !passOver.test(err)) return subscriber.error(err);
            (passed ??= []).push(err);
            weights[i] = 0;
            pick();
          },
          complete: () => subscriber.complete(),
        }),
      );
    };
    pick();
    return subs;
  });
}
