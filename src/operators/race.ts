import { asyncScheduler, Observable, Subscription, type SchedulerLike } from 'rxjs';

export interface RaceOptions<T, A = void> {
  children: readonly ((arg: A) => Observable<T>)[];
  /** How long to wait for an answer before starting the next contender. */
  hedgeAfterMs: number;
  scheduler?: SchedulerLike;
  /** Told the index of each contender unsubscribed because another won. */
  onLoser?: (index: number) => void;
}

/**
 * A staggered hedge: contender 0 starts at once, each next one `hedgeAfterMs` later (or at once when
 * every started contender has failed). The first to emit wins and the others are unsubscribed, which
 * aborts their upstream calls. A contender's failure does not fail the race; when all fail, the last
 * error is the answer. Built once (per plan); the returned function is called with `arg`, the
 * request's context.
 *
 * Written by hand: RxJS's `race` starts every contender at once and fails with the first error, and
 * a composition of `merge`, timers and `takeUntil` would need the same bookkeeping spread over more
 * subscriptions.
 */
export function race<T, A = void>(o: RaceOptions<T, A>): (arg: A) => Observable<T> {
  const { children: contenders, hedgeAfterMs, scheduler = asyncScheduler, onLoser } = o;
  return (arg) =>
    new Observable<T>((subscriber) => {
      const n = contenders.length;
      const subs: (Subscription | undefined)[] = new Array(n);
      const all = new Subscription();
      let winner = -1;
      let started = 0;
      let failed = 0;
      let hedge: Subscription | undefined;

      const scheduleNext = (): void => {
        hedge?.unsubscribe();
        if (started >= n || winner >= 0) return;
        hedge = scheduler.schedule(() => start(), hedgeAfterMs);
        all.add(hedge);
      };
      const start = (): void => {
        const i = started++;
        const sub = contenders[i]!(arg).subscribe({
          next: (v) => {
            if (winner < 0) {
              winner = i;
              hedge?.unsubscribe();
              subs.forEach((s, j) => {
                if (j !== i && s && !s.closed) {
                  s.unsubscribe();
                  onLoser?.(j);
                }
              });
            }
            if (winner === i) subscriber.next(v);
          },
          error: (err: unknown) => {
            if (winner === i) return subscriber.error(err);
            if (winner >= 0) return;
            failed++;
            if (failed === n) return subscriber.error(err);
            // Nobody is left running: start the next contender now instead of waiting.
            if (failed === started && started < n) start();
          },
          complete: () => {
            if (winner < 0) winner = i;
            if (winner === i) subscriber.complete();
          },
        });
        subs[i] = sub;
        all.add(sub);
        scheduleNext();
      };
      if (n === 0) subscriber.complete();
      else start();
      return all;
    });
}
