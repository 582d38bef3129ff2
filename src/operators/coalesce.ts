import { defer, finalize, ReplaySubject, share, type Observable } from 'rxjs';

/**
 * Concurrent identical requests share one upstream call: the first subscriber starts it, later ones
 * join and get every event from the start (replayed). The call is aborted only when every subscriber
 * has left; the entry is dropped when it ends, so a later request starts afresh.
 */
export function coalesce<T>(inflight: Map<string, Observable<T>>, key: string, start: () => Observable<T>): Observable<T> {
  return defer(() => {
    let shared = inflight.get(key);
    if (!shared) {
      shared = start().pipe(
        finalize(() => inflight.delete(key)),
        share({ connector: () => new ReplaySubject<T>(), resetOnError: true, resetOnComplete: true, resetOnRefCountZero: true }),
      );
      inflight.set(key, shared);
    }
    return shared;
  });
}
