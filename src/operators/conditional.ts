import { defer, type Observable } from 'rxjs';

export interface ConditionalOptions<T, A = void> {
  children: readonly ((arg: A) => Observable<T>)[];
  /** The index of the child that serves this request (the first matching condition, else the default). */
  pick: (arg: A) => number;
}

/**
 * Route to the child `pick` chooses for this request, chosen at subscription. Built once (per plan);
 * the returned function is called with `arg`, the request's context.
 */
export function conditional<T, A = void>(o: ConditionalOptions<T, A>): (arg: A) => Observable<T> {
  const { children, pick } = o;
  return (arg) => defer(() => children[pick(arg)]!(arg));
}
