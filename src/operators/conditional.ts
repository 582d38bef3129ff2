import { defer, type Observable } from 'rxjs';

/** Route to the child `pick` chooses for this request (the first matching condition, else default). */
export function conditional<T>(pick: () => number, children: readonly (() => Observable<T>)[]): Observable<T> {
  return defer(() => children[pick()]!());
}
