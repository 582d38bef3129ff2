/**
 * Usage limits as one service: admission (admission.ts) against the active policies
 * (policy-index.ts, matching.ts), the ledger (ledger.ts) that prices every answer and settles the
 * reservations, settlement with its retries (settlement.ts), and alerts (alerts.ts). The pipeline's
 * stage is src/operators/usage-limit.ts; the service is also the pipeline's ledger.
 */
import type { Telemetry } from '../metrics/telemetry.js';
import type { PriceTable } from '../pricing/prices.js';
import type { PolicyStore } from '../state/policy-store.js';
import type { UsageCounters } from '../state/usage-counters.js';
import { Admission } from './admission.js';
import { Alerts, type AlertWebhook } from './alerts.js';
import { UsageLedger } from './ledger.js';
import { PolicyIndex } from './policy-index.js';
import { Settlement } from './settlement.js';
import type { LimitedRequest, StoreErrorMode, UsageLimitsLogger } from './types.js';

export interface UsageLimitsDeps {
  policies: Pick<PolicyStore, 'active' | 'generation'>;
  counters: UsageCounters;
  prices: PriceTable;
  telemetry: Telemetry;
  logger: UsageLimitsLogger;
  /** Epoch ms (the pipeline's clock). */
  now: () => number;
  /** What a request under a policy gets when the counters cannot be reached. */
  onStoreError: StoreErrorMode;
  /** Where alerts are POSTed (through the host-guarded client), if anywhere. */
  webhook?: AlertWebhook;
  /** Warnings of fail-open admissions are logged at most this often (ms). Default 10 s. */
  warnIntervalMs?: number;
  /** A settle that could not reach the counters is tried again this often (ms). Default 1 s. */
  retryIntervalMs?: number;
}

export class UsageLimits {
  private readonly index: PolicyIndex;
  private readonly admission: Admission;
  private readonly settlement: Settlement;
  private readonly ledger: UsageLedger;

  constructor(deps: UsageLimitsDeps) {
    const { counters, prices, telemetry, logger, now } = deps;
    this.index = new PolicyIndex(deps.policies);
    this.admission = new Admission({ index: this.index, counters, prices, telemetry, logger, now, onStoreError: deps.onStoreError, warnIntervalMs: deps.warnIntervalMs });
    const alerts = new Alerts({ telemetry, logger, webhook: deps.webhook });
    this.settlement = new Settlement({ counters, alerts, now, retryIntervalMs: deps.retryIntervalMs });
    this.ledger = new UsageLedger({ prices, telemetry, settlement: this.settlement });
  }

  /** True while no policy is active at all: the stage is then the identity. */
  idle(): boolean {
    return this.index.empty();
  }

  /** Admission (admission.ts): undefined when no policy applies, else a promise that resolves once reserved. */
  admit(req: LimitedRequest): Promise<void> | undefined {
    return this.admission.admit(req);
  }

  /** Gives back what the request holds, settled with what it used (the client left while it was admitted). */
  release(req: LimitedRequest): Promise<void> | undefined {
    return this.ledger.release(req);
  }

  /** The request's cost in USD so far (undefined: a model without a price). */
  cost(req: LimitedRequest): number | undefined {
    return this.ledger.cost(req);
  }

  /** The answer is over: priced, counted, and its reservations settled (ledger.ts). */
  end(req: LimitedRequest): Promise<void> | undefined {
    return this.ledger.end(req);
  }

  /** Stops the settle retries (shutdown). */
  stop(): void {
    this.settlement.stop();
  }
}
