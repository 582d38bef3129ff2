import { finalize, from, map, mergeMap, of, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import type { UsageLimits } from '../limits/service.js';
import type { LimitedRequest } from '../limits/types.js';

export interface UsageLimitOptions {
  /** The usage-limits service (src/limits/service.ts). */
  limits: Pick<UsageLimits, 'idle' | 'admit' | 'release'>;
}

/**
 * The usage-limit stage: each request is passed on once admitted against the usage-limit policies
 * it matches (src/limits/admission.ts: reserved, else 412 or 503). With no active policy at all it
 * is the identity (no Observable is made).
 */
export function usageLimit<C extends LimitedRequest>({ limits }: UsageLimitOptions): MonoTypeOperatorFunction<C> {
  return (source) => (limits.idle() ? source : source.pipe(mergeMap((req) => admitted(limits, req))));
}

/** The request once admitted (at once when no policy applies); a 412 or 503 as an error. */
function admitted<C extends LimitedRequest>(limits: UsageLimitOptions['limits'], req: C): Observable<C> {
  const admission = limits.admit(req);
  if (!admission) return of(req);
  let passed = false;
  return from(admission).pipe(
    map(() => {
      passed = true;
      return req;
    }),
    // the client left while the reservation was being made: nothing was used, so it is given back
    finalize(() => {
      if (!passed) admission.then(() => limits.release(req), () => undefined);
    }),
  );
}
