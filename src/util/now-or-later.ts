/**
 * A value computed at once, or an Observable of one that comes later (it waits on I/O). The hook
 * path (src/checks/settle.ts, src/checks/hooks.ts) returns these: checks that only compute give
 * their results directly, and RxJS takes over only where a check awaits something.
 */
import { mergeMap, Observable, of } from 'rxjs';

/** `T` now, or later. `T` is never itself an Observable. */
export type NowOrLater<T> = T | Observable<T>;

export const isLater = <T>(v: NowOrLater<T>): v is Observable<T> => v instanceof Observable;

/** As an Observable: a value at hand is emitted when subscribed. */
export const later = <T>(v: NowOrLater<T>): Observable<T> => (isLater(v) ? v : of(v));

/** `next` of the value: now when it is at hand, else when it comes (an Observable). */
export function andThen<T, R>(v: NowOrLater<T>, next: (value: T) => NowOrLater<R>): NowOrLater<R> {
  return isLater(v) ? v.pipe(mergeMap((value) => later(next(value)))) : next(v);
}
