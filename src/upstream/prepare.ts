import { Observable } from 'rxjs';
import type { PrepareContext, Provider, Target, UpstreamRequest } from '../providers/types.js';

/**
 * A provider's async `prepare` step (sign, fetch or refresh a token) as a cold Observable of the
 * request to send: subscribing starts it, unsubscribing before it settles aborts its signal. A
 * provider without the step sends its request as built, with no Observable and no AbortController.
 */
export function prepareRequest(
  provider: Provider,
  request: UpstreamRequest,
  target: Target,
  ctx: Omit<PrepareContext, 'signal'>,
): Observable<UpstreamRequest> | undefined {
  const prepare = provider.prepare;
  if (!prepare) return undefined;
  // Its own Observable: the abort controller lives as long as the subscription (`from(promise)` cannot abort it).
  return new Observable<UpstreamRequest>((subscriber) => {
    const ac = new AbortController();
    let settled = false;
    prepare.call(provider, request, target, { ...ctx, signal: ac.signal }).then(
      (prepared) => {
        settled = true;
        subscriber.next(prepared);
        subscriber.complete();
      },
      (err: unknown) => {
        settled = true;
        subscriber.error(err);
      },
    );
    return () => {
      if (!settled) ac.abort();
    };
  });
}
