import { catchError, defer, EMPTY, tap, type Observable } from 'rxjs';

/**
 * Children whose error says they cannot serve the request at all (they were never asked): passed
 * over whatever `shouldFallBack` says; when no child was tried, `none` of their errors is the answer.
 */
export interface PassOver {
  test: (err: unknown) => boolean;
  none: (errors: unknown[]) => unknown;
}

export interface FallbackOptions<T, A = void> {
  children: readonly ((arg: A) => Observable<T>)[];
  /** Whether an error (before anything was emitted) moves on to the next child. */
  shouldFallBack: (err: unknown) => boolean;
  onFallback?: (fromIndex: number, err: unknown) => void;
  passOver?: PassOver;
}

/**
 * Try children in order; on an error before anything was emitted, move to the next when
 * `shouldFallBack` says so. The last child's error is the answer when all fail. Once a child has
 * emitted (a stream reached the client) its error is final. Built once (per plan); the returned
 * function is called with `arg` (the request's context) and builds each child only when it is tried.
 *
 * With `passOver`, a child that cannot serve is skipped; when the children run out, the last real
 * failure is the answer, or, when every child was passed over, `passOver.none` of their errors.
 */
export function fallback<T, A = void>(o: FallbackOptions<T, A>): (arg: A) => Observable<T> {
  const { children, shouldFallBack, onFallback, passOver } = o;
  const n = children.length;
  if (n === 0) return () => EMPTY;
  return (arg) =>
    defer(() => {
      // One child runs at a time, so one flag says whether the running child has emitted.
      let emitted = false;
      let failure: { err: unknown } | undefined;
      let passed: unknown[] | undefined;
      const attempt = (i: number): Observable<T> =>
        children[i]!(arg).pipe(
          tap(() => {
            emitted = true;
          }),
          catchError((err: unknown) => {
            if (emitted) throw err;
            const last = i + 1 === n;
            if (passOver?.test(err)) {
              (passed ??= []).push(err);
              if (last) throw failure ? failure.err : passOver.none(passed);
              return attempt(i + 1);
            }
            if (last || !shouldFallBack(err)) throw err;
            failure = { err };
            onFallback?.(i, err);
            return attempt(i + 1);
          }),
        );
      return attempt(0);
    });
}
