import { Observable, Subscription } from 'rxjs';

/**
 * Try children in order; on an error before anything was emitted, move to the next when
 * `shouldFallBack` says so. The last child's error is the answer when all fail. Once a child has
 * emitted (a stream reached the client) its error is final. Children are built once (per plan) and
 * called with `arg` (the request's context), so a request allocates no closures per child.
 */
export function fallback<T, A = void>(
  children: readonly ((arg: A) => Observable<T>)[],
  shouldFallBack: (err: unknown) => boolean,
  onFallback?: (fromIndex: number, err: unknown) => void,
  arg?: A,
): Observable<T> {
  return new Observable<T>((subscriber) => {
    const subs = new Subscription();
    let emitted = false;
    const run = (i: number): void => {
      subs.add(
        children[i]!(arg as A).subscribe({
          next: (v) => {
            emitted = true;
            subscriber.next(v);
          },
          error: (err: unknown) => {
            if (!emitted && i + 1 < children.length && shouldFallBack(err)) {
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
