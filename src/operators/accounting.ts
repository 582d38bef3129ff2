import { catchError, concatMap, concatWith, defer, EMPTY, finalize, from, noop, of, tap, throwError, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
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

/** Where a request's accounting goes: the pipeline's RequestOutcome is one. */
export interface UsageAccount {
  usage?: Usage;
  cost?: number;
}

/** What prices a request's answer and counts it when it is over (src/limits/ledger.ts is the gateway's). */
export interface Ledger<A extends UsageAccount> {
  /** The request's cost in USD so far (undefined: a model without a price). */
  cost(account: A): number | undefined;
  /**
   * Called once when the answer is over: its last event passed, it failed, or it was cancelled (the
   * client left). A promise when the count must land before the client hears the end (it never
   * rejects); nothing when there is nothing to wait for.
   */
  end(account: A): Promise<void> | undefined;
}

export interface AccountingOptions<A extends UsageAccount> {
  /** The request's account: the pipeline's RequestOutcome. */
  account: A;
  /** Prices the answer and counts the request when it is over; absent: usage is kept, nothing counted. */
  ledger?: Ledger<A>;
}

/**
 * Accounting: the answer's token usage (a JSON body's, or the stream chunk that carries it) is kept
 * on the request's account for the log line and metrics; with a ledger, a JSON answer's cost is
 * set before it is written (the `x-gateway-cost` header), and the ledger counts the request when its
 * answer ends, however it ends. Events pass unchanged.
 *
 * The end of an answer (a JSON answer, which nothing is spent after; a stream's completion, which
 * writes `[DONE]`; an error) is passed on once the ledger has counted it: a client that sends its next
 * request as soon as it has this answer is then admitted against this one's usage, not against its
 * reservation still held (a usage limit would refuse it as full while nothing is in flight). An answer
 * whose client left is counted without waiting.
 */
export function accounting<A extends UsageAccount>({ account, ledger }: AccountingOptions<A>): MonoTypeOperatorFunction<GatewayEvent> {
  const keepUsage = tap<GatewayEvent>((ev) => {
    if (ev.type !== 'stream-start' && ev.usage) account.usage = ev.usage;
  });
  if (!ledger) return keepUsage;
  return (source) =>
    defer(() => {
      let ended = false;
      let counted: Promise<void> | undefined;
      const end = (): void => {
        if (ended) return;
        ended = true;
        try {
          counted = ledger.end(account);
        } catch {
          // counting never fails the answer
        }
      };
      /** `then` once the count landed (at once when there is nothing to wait for). */
      const landed = <T>(then: Observable<T>): Observable<T> =>
        defer(() => (counted ? from(counted.then(noop, noop)).pipe(concatMap(() => then)) : then));
      return source.pipe(
        keepUsage,
        tap({
          next: (ev) => {
            if (ev.type !== 'json') return;
            account.cost = ledger.cost(account);
            end(); // nothing is spent after a JSON answer: it is counted now, and written once counted
          },
          error: end,
          complete: end,
        }),
        // the end waits for the count; a JSON answer before it waited for the same count, so it passes first
        catchError((e: unknown) => landed(throwError(() => e))),
        concatWith(landed(EMPTY)),
        concatMap((ev) => (ev.type === 'json' ? landed(of(ev)) : [ev])),
        finalize(end),
      );
    });
}
