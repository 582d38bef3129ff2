import { Observable, Subscription } from 'rxjs';

/**
 * Children whose error says they cannot serve the request at all (they were never asked): passed
 * over whatever `shouldFallBack` says; when no child was tried, `none` of their errors is the answer.
 */
export interface PassOver {
  test: (err: unknown) => boolean;
  none: (errors: unknown[]) => unknown;
}

/**
 * Try children in order; on an error before anything was emitted, move to the next when
 * `shouldFallBack` says so. The last child's error is the answer when all fail. Once a child has
 * emitted (a stream reached the client) its error is final. Children are built once (per plan) and
 * called with `arg` (the request's context), so a request allocates no closures per child.
 *
 * With `passOver`, a child that cannot serve is skipped; when the children run out, the last real
 * failure is the answer, or, when every child was passed over, `passOver.none` of their errors.
 */
export function fallback<T, A = void>(
  children: readonly ((arg: A) => Observable<T>)[],
  shouldFallBack: (err: unknown) => boolean,
  onFallback?: (fromIndex: number, err: unknown) => void,
  arg?: A,
  passOver?: PassOver,
): Observable<T> {
  return new Observable<T>((subscriber) => {
    const subs = new Subscription();
    let emitted = false;
    let failure: { err: unknown } | undefined;
    let passed: unknown[] | undefined;
    const run = (i: number): void => {
      subs.add(
        children[i]!(arg as A).subscribe({
          next: (v) => {
            emitted = true;
            subscriber.next(v);
          },
          error: (err: unknown) => {
            if (!emitted && passOver?.test(err)) {
              (passed ??= []).push(err);
              if (i + 1 < children.length) run(i + 1);
              else subscriber.error(failure ? failure.err : passOver.none(passed));
            } else if (!emitted && i + 1 < children.length && shouldFallBack(err)) {
              failure = { err };
              onFallback?.(i, err);
              run(i + 1);
            } else subscriber.error(err);
          },
          complete: () => subscriber.complete(),
        }),
      );
    };
    if (children.length === 0) subscriber.complete();
    else run(0);
    return subs;
  });
}
