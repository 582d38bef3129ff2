/**
 * Settlement: a request's reservations replaced by what it used, once the counters take it; then
 * its alerts are raised. A settle the counters did not take (unreachable) is kept and tried again
 * every interval until they do (settles are idempotent: nothing is counted twice); at most
 * RETRY_MAX wait, then the oldest are dropped.
 */
import type { Reservation, SettleItem, UsageCounters } from '../state/usage-counters.js';
import type { Alerts } from './alerts.js';
import type { Held, KeyScope } from './types.js';

/** One request's settle: its reservation, what each held policy counts, and for its alerts the policies and key. */
export interface Settle {
  reservation: Reservation;
  actual: SettleItem[];
  held: Held[];
  scope: KeyScope | undefined;
}

export interface SettlementDeps {
  counters: Pick<UsageCounters, 'settle'>;
  alerts: Pick<Alerts, 'raise'>;
  now: () => number;
  /** A settle that could not reach the counters is tried again this often (ms). Default 1 s. */
  retryIntervalMs?: number;
}

/** Pending settles kept for retry while the counters are unreachable (then the oldest are dropped). */
const RETRY_MAX = 10_000;

export class Settlement {
  private readonly retries: Settle[] = [];
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: SettlementDeps) {}

  /** Resolves once the counters took the settle, or it failed and waits for a retry (never rejects). */
  settle(s: Settle): Promise<void> {
    return this.deps.counters.settle(s.reservation, s.actual, this.deps.now()).then(
      (alerts) => this.deps.alerts.raise(alerts, s.held, s.scope),
      () => this.retryLater(s),
    );
  }

  /** Stops the retries (shutdown). */
  stop(): void {
    if (this.retryTimer) clearInterval(this.retryTimer);
    this.retryTimer = undefined;
  }

  private retryLater(s: Settle): void {
    if (this.retries.length >= RETRY_MAX) this.retries.shift();
    this.retries.push(s);
    if (this.retryTimer) return;
    this.retryTimer = setInterval(() => {
      const batch = this.retries.splice(0);
      if (batch.length === 0) return this.stop();
      for (const x of batch) void this.settle(x);
    }, this.deps.retryIntervalMs ?? 1000);
    this.retryTimer.unref();
  }
}
