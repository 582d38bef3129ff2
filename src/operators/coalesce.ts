import { defer, finalize, ReplaySubject, share, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import type { Flow } from '../upstream/flow.js';
import { paced } from './paced.js';

/** The flow of the request that started each shared call: its upstream body is attached to it. */
const leaders = new WeakMap<Observable<unknown>, Flow>();

export interface CoalesceOptions<T> {
  /** The calls in flight, by key, shared by every request of the gateway. */
  inflight: Map<string, Observable<T>>;
  key: string;
  /** Streams: the client's flow control. */
  flow?: Flow;
}

/**
 * Concurrent identical requests share one upstream call (the source): the first subscriber starts it,
 * later ones join and get every event from the start (replayed); a joining request's source is never
 * subscribed. The call is aborted only when every subscriber has left; the entry is dropped when it
 * ends, so a later request starts afresh.
 *
 * With `flow` (streams), each subscriber is paced by its own client, and a joining request's flow
 * joins the starter's: the shared upstream is paused only while every client is, so a slow client
 * neither stalls the others nor copies the stream into its socket buffer.
 */
export function coalesce<T>(o: CoalesceOptions<T>): MonoTypeOperatorFunction<T> {
  const { inflight, key, flow } = o;
  return (source) =>
    defer(() => {
      let shared = inflight.get(key);
      if (!shared) {
        shared = source.pipe(
          finalize(() => inflight.delete(key)),
          share({ connector: () => new ReplaySubject<T>(), resetOnError: true, resetOnComplete: true, resetOnRefCountZero: true }),
        );
        inflight.set(key, shared);
        if (flow) leaders.set(shared, flow);
      }
      if (!flow) return shared;
      const leader = leaders.get(shared);
      const mine = shared.pipe(paced<T>(flow));
      if (!leader || leader === flow) return mine;
      const leave = leader.join(flow);
      return mine.pipe(finalize(leave));
    });
}
