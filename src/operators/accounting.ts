import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { Usage } from '../config/wire.js';
import type { GatewayEvent } from '../upstream/events.js';

/** Where a request's accounting goes: the pipeline's RequestContext is one. */
export interface UsageAccount {
  usage?: Usage;
}

/**
 * Accounting: the answer's token usage (a JSON body's, or the stream chunk that carries it) is kept
 * on the request's account for the log line, metrics and, later, usage limits. Events pass unchanged.
 */
export function accounting(account: UsageAccount): MonoTypeOperatorFunction<GatewayEvent> {
  return (source) =>
    new Observable<GatewayEvent>((subscriber) =>
      source.subscribe({
        next(ev) {
          if (ev.type !== 'stream-start' && ev.usage) account.usage = ev.usage;
          subscriber.next(ev);
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => subscriber.complete(),
      }),
    );
}
