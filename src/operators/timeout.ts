import { throwError, timeout, type Observable, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * `request_timeout` for one attempt: the first emission (a whole JSON answer, or a stream's first
 * chunk) must arrive within `firstMs`; after that a stream may be idle at most `idleMs` between
 * chunks (without `firstMs`, the first chunk too). Elapsing unsubscribes upstream (which aborts the
 * HTTP call) and errors: 408 request_timeout when the request's own `request_timeout` elapsed, 504
 * upstream_timeout when the gateway's idle limit did (the provider went silent).
 */
export function attemptTimeout<T>(
  firstMs: number | undefined,
  idleMs: number | undefined,
  scheduler?: SchedulerLike,
): MonoTypeOperatorFunction<T> {
  if (firstMs === undefined && idleMs === undefined) return (source) => source;
  if (firstMs !== undefined && (!Number.isFinite(firstMs) || firstMs <= 0)) throw new Error(`request_timeout must be > 0, got ${firstMs}`);
  return timeout<T, Observable<never>>({
    first: firstMs,
    each: idleMs,
    with: (info) =>
      throwError(() =>
        info.seen === 0 && firstMs !== undefined
          ? new GatewayError('request_timeout', `The request timed out after ${firstMs} ms.`, { param: 'request_timeout' })
          : new GatewayError(
              'upstream_timeout',
              info.seen === 0 ? `The provider sent no chunk within ${idleMs} ms.` : `The stream was idle for more than ${idleMs} ms.`,
            ),
      ),
    ...(scheduler ? { scheduler } : {}),
  });
}
