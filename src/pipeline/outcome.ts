import type { HookAccount } from '../checks/hooks.js';
import type { Spent } from '../operators/accounting.js';
import type { KeyScope, LimitHold } from '../limits/types.js';
import type { PlanNode } from '../plan/types.js';
import type { ProviderRequest, Usage } from '../providers/types.js';
import type { AnswerMeta } from '../upstream/events.js';

/** The request an outcome belongs to, as far as the outcome shows it (the pipeline's RequestContext is one). */
export interface OutcomeOf {
  readonly traceId: string;
  request: ProviderRequest;
  readonly metadata?: Record<string, unknown>;
  readonly key?: KeyScope;
  readonly plan?: PlanNode;
}

/**
 * What one request's stages learn while it runs: one object per request, each field written by the
 * stage that produces it and read by the response writer, the log line, the record and the metrics.
 * Every field is declared here (a constructor assigns them all), so every outcome has one shape.
 *
 * The stages that read the request and record its outcome in one object (the hook stages, the
 * usage-limit admission and ledger) are handed this object: `traceId`, `request`, `metadata`, `key`
 * and `plan` read through to the request it belongs to (a hook's change to the body is the
 * request's).
 */
export class RequestOutcome {
  /** What the request's hooks and guardrails produced (the hook stages). */
  hooks: HookAccount | undefined = undefined;
  /** The answer's token usage (accounting). */
  usage: Usage | undefined = undefined;
  /** Every upstream attempt that answered, with its usage (measure): what the request costs and counts. */
  spent: Spent[] | undefined = undefined;
  /** The request's cost in USD (accounting: every attempt priced; absent when a model has no price). */
  cost: number | undefined = undefined;
  /** The usage-limit reservations the request holds (admission; settled by the ledger when the answer ends). */
  limits: LimitHold | undefined = undefined;
  /** Upstream attempts made (the call). */
  attempts = 0;
  /**
   * The target whose attempt failed (or whose circuit refused it) last (measure, circuit breaker): an
   * error response names it in its x-gateway-* headers and log line. Set on failure only, so under
   * race or fallback it is the target whose error is the answer.
   */
  failed: AnswerMeta | undefined = undefined;
  /** The cache lookup's result, when a cache ran (an error response's x-gateway-cache-status). */
  cacheStatus: string | undefined = undefined;
  /** Upstream wait (measure): the union of time with at least one upstream call in flight. */
  upstreamActive = 0;
  upstreamSince = 0;
  upstreamMs = 0;

  constructor(private readonly of: OutcomeOf) {}

  get traceId(): string {
    return this.of.traceId;
  }
  get request(): ProviderRequest {
    return this.of.request;
  }
  set request(r: ProviderRequest) {
    this.of.request = r;
  }
  get metadata(): Record<string, unknown> | undefined {
    return this.of.metadata;
  }
  get key(): KeyScope | undefined {
    return this.of.key;
  }
  get plan(): PlanNode | undefined {
    return this.of.plan;
  }

  /** Upstream wait in ms up to `now` (an attempt still in flight counts until now). */
  upstreamWaitMs(now: number): number {
    return this.upstreamMs + (this.upstreamActive > 0 ? now - this.upstreamSince : 0);
  }
}
