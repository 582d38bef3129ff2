/**
 * A value computed at once, or an Observable of one that comes later (it waits on I/O). The hook
 * path (src/checks/settle.ts, src/checks/hooks.ts) returns these: checks that only compute give
 * their results directly, and RxJS takes over only where a check awaits something.
 */
import { mergeMap, Observable, of, type OperatorFunction, type Subscription } from 'rxjs';

/** `T` now, or later. `T` is never itself an Observable. */
export type NowOrLater<T> = T | Observable<T>;

export const isLater = <T>(v: NowOrLater<T>): v is Observable<T> => v instanceof Observable;

/** As an Observable: a value at hand is emitted when subscribed. */
export const later = <T>(v: NowOrLater<T>): Observable<T> => (isLater(v) ? v : of(v));

/** `next` of the value: now when it is at hand, else when it comes (an Observable). */
export function andThen<T, R>(v: NowOrLater<T>, next: (value: T) => NowOrLater<R>): NowOrLater<R> {
  return isLater(v) ? v.pipe(mergeMap((value) => later(next(value)))) : next(v);
}

/**
 * `next` of each value, in order, and `end` at the source's end: what they give at once (a value, or
 * nothing when undefined) is passed on as it comes; an Observable is waited for, and the values and
 * the end that follow wait behind it. The hook stages' answers go through this (no Observable per
 * event, a subscription only for what waits): one Observable, not defer + map + concatMap +
 * concatWith per answer (the `guardrails` benchmark, benchmarks/scenarios/guardrails.ts, spent about
 * a tenth of the gateway's CPU in those operators).
 */
export function inOrder<T, R>(next: (value: T) => NowOrLater<R> | undefined, end?: () => Observable<R> | undefined): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      /** Work behind an Observable still waited for. */
      const queue: (() => void)[] = [];
      let waiting: Subscription | undefined;
      const give = (out: NowOrLater<R> | undefined): void => {
        if (out === undefined) return;
        if (!isLater(out)) return subscriber.next(out);
        let done = false;
        const sub = out.subscribe({
          next: (v) => subscriber.next(v),
          error: (e: unknown) => subscriber.error(e),
          complete: () => {
            done = true;
            waiting = undefined;
            while (queue.length > 0 && !waiting) queue.shift()!();
          },
        });
        if (!done) waiting = sub;
      };
      /** `next` of a value; its throw is the answer's error. */
      const take = (v: T): void => {
        try {
          give(next(v));
        } catch (e) {
          subscriber.error(e);
        }
      };
      const finish = (): void => {
        try {
          give(end?.());
        } catch (e) {
          return subscriber.error(e);
        }
        if (waiting) queue.push(() => subscriber.complete());
        else subscriber.complete();
      };
      const sub = source.subscribe({
        next: (v) => (waiting ? queue.push(() => take(v)) : take(v)),
        error: (e: unknown) => subscriber.error(e),
        complete: () => (waiting ? queue.push(finish) : finish()),
      });
      return () => {
        sub.unsubscribe();
        waiting?.unsubscribe();
      };
    });
}
