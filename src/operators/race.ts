import { asyncScheduler, Observable, Subscription, type SchedulerLike } from 'rxjs';

/**
 * A staggered hedge: contender 0 starts at once, each next one `hedgeAfterMs` later (or at once when
 * every started contender has failed). The first to emit wins and the others are unsubscribed, which
 * aborts their upstream calls. A contender's failure does not fail the race; when all fail, the last
 * error is the answer.
 */
export function race<T, A = void>(
  contenders: readonly ((arg: A) => Observable<T>)[],
  hedgeAfterMs: number,
  scheduler: SchedulerLike = asyncScheduler,
  onLoser?: (index: number) => void,
  arg?: A,
): Observable<T> {
  return new Observable<T>((subscriber) => {
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
      const sub = contenders[i]!(arg as A).subscribe({
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
