import { defer, from, mergeMap, tap, throwError, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import { TargetCannotServe } from '../errors/cannot-serve.js';
import type { AdmitResult, BreakerPolicy, BreakerStore, CircuitStatus, Transition } from '../state/breaker-store.js';

export interface CircuitBreakerOptions {
  store: BreakerStore;
  id: string;
  policy: BreakerPolicy;
  /** Status codes that count as failures; default every status ≥ 500. Transport errors and timeouts always count. */
  failureStatusCodes?: readonly number[];
  now: () => number;
  onState?: (status: CircuitStatus, transition?: Transition) => void;
  /** Called when the open circuit refuses a request (before the 503 travels down). */
  onRefused?: () => void;
}

const TRANSPORT = new Set(['upstream_unreachable', 'upstream_invalid_response', 'stream_interrupted', 'request_timeout', 'upstream_timeout']);

export function circuitOpenError(retryAfterMs: number): GatewayError {
  return new GatewayError('circuit_open', undefined, { headers: { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) } });
}

export function countsAsFailure(err: unknown, codes: readonly number[] | undefined): boolean {
  if (!(err instanceof GatewayError)) return true;
  if (err.code === 'circuit_open') return false;
  if (TRANSPORT.has(err.code)) return true;
  if (err.code !== 'upstream_error') return false;
  return codes && codes.length > 0 ? codes.includes(err.status) : err.status >= 500;
}

/**
 * A target's circuit: refuse at once (503 circuit_open, Retry-After = time left) while it is open;
 * after the cooldown let one probe through. The first value emitted is a success; a counted error is
 * a failure; a cancelled probe releases its slot.
 */
export function circuitBreaker<T>(o: CircuitBreakerOptions): MonoTypeOperatorFunction<T> {
  if (!(o.policy.failureThreshold >= 1)) throw new Error('cb_config.failure_threshold must be at least 1');
  return (source) =>
    defer(() => {
      const admitted = o.store.admit(o.id, o.now(), o.policy);
      return admitted instanceof Promise ? from(admitted).pipe(mergeMap((r) => guarded(source, r))) : guarded(source, admitted);
    });

  function guarded(source: Observable<T>, { admission, transition }: AdmitResult): Observable<T> {
    if (transition) o.onState?.(transition.to, transition);
    if (admission.kind === 'open') {
      o.onRefused?.();
      return throwError(() => circuitOpenError(admission.retryAfterMs));
    }
    const probe = admission.kind === 'probe';
    let settled = false;
    // Recording an outcome never fails or hangs the request it belongs to: what the store or the state
    // callback throws is caught here, and the tap below forwards every event.
    const settle = (failed: boolean): void => {
      settled = true;
      try {
        const t = failed ? o.store.onFailure(o.id, o.now(), o.policy) : o.store.onSuccess(o.id);
        if (t) o.onState?.(t.to, t);
      } catch {
        // the breaker counts what it could record
      }
    };
    const release = (): void => {
      try {
        o.store.releaseProbe(o.id);
      } catch {
        // a failing store is not the request's failure
      }
    };
    return source.pipe(
      tap({
        next: () => {
          if (!settled) settle(false);
        },
        error: (e: unknown) => {
          if (settled) return; // already counted
          if (e instanceof TargetCannotServe) {
            // Refused in translation: the provider was never asked, so this says nothing of its
            // health (neither a success that would close the circuit nor a failure).
            settled = true;
            if (probe) release();
          } else settle(countsAsFailure(e, o.failureStatusCodes));
        },
        complete: () => {
          if (!settled) settle(false);
        },
        // Cancelled before any outcome: a probe gives its slot back.
        finalize: () => {
          if (!settled && probe) release();
        },
      }),
    );
  }
}
