import { asyncScheduler, Observable, throwError, timeout, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import type { Flow } from '../upstream/flow.js';

/** The request's own request_timeout elapsed: 408. */
const requestTimeoutError = (ms: number): GatewayError =>
  new GatewayError('request_timeout', `The request timed out after ${ms} ms.`, { param: 'request_timeout' });
/** The gateway's idle limit elapsed before the first chunk (no request_timeout set): the provider went silent, 504. */
const noChunkError = (idleMs: number): GatewayError => new GatewayError('upstream_timeout', `The provider sent no chunk within ${idleMs} ms.`);
/** The gateway's idle limit elapsed between chunks: 504. */
const idleError = (idleMs: number): GatewayError => new GatewayError('upstream_timeout', `The stream was idle for more than ${idleMs} ms.`);
/** What a first emission that never came means: the request's own limit, else the provider's silence. */
const firstError = (firstMs: number | undefined, idleMs: number): GatewayError =>
  firstMs !== undefined ? requestTimeoutError(firstMs) : noChunkError(idleMs);

/**
 * The idle limit between values, not counted while `flow` is paused: a stream held back by a slow
 * client is not an idle upstream (the client's own stall is bounded where it is written). Written by
 * hand: RxJS's `timeout` cannot stop its clock while the client is not reading.
 */
function idleUnlessPaused<T>(idleMs: number, flow: Flow, scheduler: SchedulerLike): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let timer: Subscription | undefined;
      let seen = false;
      const arm = (): void => {
        timer?.unsubscribe();
        timer = flow.paused ? undefined : scheduler.schedule(() => subscriber.error(idleError(idleMs)), idleMs);
      };
      const off = flow.onChange(() => {
        // Paused with a timer running, or running again without one.
        if (seen && flow.paused !== (timer === undefined)) arm();
      });
      const sub = source.subscribe({
        next(v) {
          seen = true;
          arm();
          subscriber.next(v);
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => subscriber.complete(),
      });
      return () => {
        off();
        timer?.unsubscribe();
        sub.unsubscribe();
      };
    });
}

export interface AttemptTimeoutOptions {
  /** The request's `request_timeout`: the first emission must arrive within it. */
  firstMs?: number;
  /** The gateway's idle limit between a stream's chunks (and before the first, without `firstMs`). */
  idleMs?: number;
  scheduler?: SchedulerLike;
  /** The client's flow control: time while it is paused is not idle time. */
  flow?: Flow;
}

/**
 * `request_timeout` for one attempt: the first emission (a whole JSON answer, or a stream's first
 * chunk) must arrive within `firstMs`; after that a stream may be idle at most `idleMs` between
 * chunks (without `firstMs`, the first chunk too), time while `flow` is paused (the client is not
 * reading) not counted. Elapsing unsubscribes upstream (which aborts the HTTP call) and errors: 408
 * request_timeout when the request's own `request_timeout` elapsed, 504 upstream_timeout when the
 * gateway's idle limit did (the provider went silent).
 */
export function attemptTimeout<T>(o: AttemptTimeoutOptions): MonoTypeOperatorFunction<T> {
  const { firstMs, idleMs, scheduler, flow } = o;
  if (firstMs === undefined && idleMs === undefined) return (source) => source;
  if (firstMs !== undefined && (!Number.isFinite(firstMs) || firstMs <= 0)) throw new Error(`request_timeout must be > 0, got ${firstMs}`);
  if (flow && idleMs !== undefined) {
    const first = firstMs ?? idleMs;
    const s = scheduler ?? asyncScheduler;
    return (source) =>
      source.pipe(
        timeout<T, Observable<never>>({
          first,
          with: () => throwError(() => firstError(firstMs, idleMs)),
          scheduler: s,
        }),
        idleUnlessPaused<T>(idleMs, flow, s),
      );
  }
  return timeout<T, Observable<never>>({
    first: firstMs,
    each: idleMs,
    with: (info) => throwError(() => (info.seen === 0 ? (firstMs !== undefined ? requestTimeoutError(firstMs) : noChunkError(idleMs!)) : idleError(idleMs!))),
    ...(scheduler ? { scheduler } : {}),
  });
}
