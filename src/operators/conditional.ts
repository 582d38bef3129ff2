import { defer, type Observable } from 'rxjs';

/**
 * Route to the child `pick` chooses for this request (the first matching condition, else default).
 * `pick` and the children are built once (per plan) and called with `arg`, the request's context.
 */
export function conditional<T, A = void>(pick: (arg: A) => number, children: readonly ((arg: A) => Observable<T>)[], arg?: A): Observable<T> {
  return defer(() => children[pick(arg as A)]!(arg as A));
}
