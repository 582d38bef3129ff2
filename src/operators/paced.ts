import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { Flow } from '../upstream/flow.js';

/**
 * Hand values on only while the request's client takes them (`flow.held` is false). Values that
 * arrive while it is held wait in a queue of references, delivered in order when it drains; the end
 * (complete or error) comes after them. For values already in memory and shared (a cache entry
 * replayed, a coalesced call's recording): a slow client costs a pointer per waiting value, not a
 * copy of the bytes in its socket buffer. No flow: the identity. Written by hand: no RxJS operator
 * holds values back on an outside signal and hands them on in order when it clears.
 */
export function paced<T>(flow: Flow | undefined): MonoTypeOperatorFunction<T> {
  if (!flow) return (source) => source;
  return (source) =>
    new Observable<T>((subscriber) => {
      const queue: T[] = [];
      let head = 0;
      let draining = false;
      let end: { error: unknown } | 'complete' | undefined;
      const drain = (): void => {
        if (draining) return;
        draining = true;
        while (head < queue.length && !flow.held && !subscriber.closed) subscriber.next(queue[head++]!);
        draining = false;
        if (head < queue.length) return;
        queue.length = 0;
        head = 0;
        if (end === 'complete') subscriber.complete();
        else if (end) subscriber.error(end.error);
      };
      const off = flow.onChange(() => {
        if (!flow.held) drain();
      });
      const sub = source.subscribe({
        next(v) {
          if (head === queue.length && !flow.held && !draining) subscriber.next(v);
          else queue.push(v);
        },
        error(e: unknown) {
          end = { error: e };
          drain();
        },
        complete() {
          end = 'complete';
          drain();
        },
      });
      return () => {
        off();
        sub.unsubscribe();
      };
    });
}
