import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { Usage } from '../config/wire.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';

/** One upstream attempt that answered (the measure operator records it): its target and its reported usage. */
export interface Spent {
  meta: AnswerMeta;
  /** Absent when the provider reported none (yet). */
  usage?: Usage;
  /** What the ledger priced it at, USD, once it did (null: its model has no price). */
  cost?: number | null;
}

/** Where a request's accounting goes: the pipeline's RequestContext is one. */
export interface UsageAccount {
  usage?: Usage;
  cost?: number;
}

/** What prices a request's answer and counts it when it is over (src/operators/usage-limit.ts). */
export interface Ledger<A extends UsageAccount> {
  /** The request's cost in USD so far (undefined: a model without a price). */
  cost(account: A): number | undefined;
  /** Called once when the answer ends: completed, failed, or cancelled (the client left). */
  end(account: A): void;
}

/**
 * Accounting: the answer's token usage (a JSON body's, or the stream chunk that carries it) is kept
 * on the request's account for the log line and metrics; with a ledger, a JSON answer's cost is
 * set before it is written (the `x-gateway-cost` header), and the ledger counts the request when its
 * answer ends, however it ends. Events pass unchanged.
 */
export function accounting<A extends UsageAccount>(account: A, ledger?: Ledger<A>): MonoTypeOperatorFunction<GatewayEvent> {
  return (source) =>
    new Observable<GatewayEvent>((subscriber) => {
      let ended = false;
      const end = (): void => {
        if (ended || !ledger) return;
        ended = true;
        try {
          ledger.end(account);
        } catch {
          // counting never fails the answer
        }
      };
      const sub = source.subscribe({
        next(ev) {
          if (ev.type !== 'stream-start' && ev.usage) account.usage = ev.usage;
          if (ev.type === 'json' && ledger) account.cost = ledger.cost(account);
          subscriber.next(ev);
        },
        error: (e: unknown) => {
          end();
          subscriber.error(e);
        },
        complete: () => {
          end();
          subscriber.complete();
        },
      });
      return () => {
        sub.unsubscribe();
        end();
      };
    });
}
