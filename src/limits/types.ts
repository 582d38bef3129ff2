/** What the usage-limits service reads from a request, and what it keeps on one while it holds reservations. */
import type { Endpoint, Usage } from '../config/wire.js';
import type { PlanNode } from '../plan/types.js';
import type { UsageLimitPolicy } from '../state/policy-store.js';
import type { Reservation } from '../state/usage-counters.js';
import type { AnswerMeta } from '../upstream/events.js';

/** The gateway key as the service sees it: its name and scope. */
export interface KeyScope {
  readonly name: string;
  readonly workspace_id?: string;
  readonly organisation_id?: string;
}

/** One upstream attempt that answered (the accounting's `Spent`): its target, its reported usage, its price once priced. */
export interface Attempt {
  meta: AnswerMeta;
  /** Absent when the provider reported none (yet). */
  usage?: Usage;
  /** What the ledger priced it at, USD, once it did (null: its model has no price). */
  cost?: number | null;
}

/**
 * What the usage-limit stage (src/operators/usage-limit.ts) and the ledger read from a request: the
 * pipeline's RequestOutcome is one (src/pipeline/outcome.ts), reading the request through to its context.
 */
export interface LimitedRequest {
  readonly traceId: string;
  readonly request: { readonly endpoint: Endpoint; readonly body: Record<string, unknown> | undefined };
  readonly plan?: PlanNode;
  readonly metadata?: Record<string, unknown>;
  readonly key?: KeyScope;
  /** Every upstream attempt that answered, with its usage (the measure operator fills it). */
  spent?: Attempt[];
  usage?: Usage;
  cost?: number;
  /** Set by the admission when the request holds reservations; settled by the ledger. */
  limits?: LimitHold;
}

/** A target the plan may call: where it is in the config, its provider, its `override_params`. */
export interface Candidate {
  path: string;
  provider: string;
  override?: Record<string, unknown>;
  /** override_params.model, when a string. */
  model?: string;
}

/** A policy compiled for matching: its conditions split by attribute, its limits in counter units. */
export interface Compiled {
  policy: UsageLimitPolicy;
  keyName?: string;
  workspace?: string;
  metadata: (readonly [string, string])[];
  provider?: string;
  /** The condition's model, normalised (`normalModelId`): compared with the target's, normalised. */
  model?: string;
  groupBy: readonly string[];
  limit: number;
  alertAt: number | null;
}

/** One matched policy of a request: what it reserved and how it was matched. */
export interface Held {
  policy: Compiled;
  /** Units reserved (the estimate). */
  estimate: number;
}

/** The reservations a request holds, settled once (`done`). */
export interface LimitHold {
  reservation: Reservation;
  held: Held[];
  done: boolean;
}

export type StoreErrorMode = 'open' | 'closed';

export interface UsageLimitsLogger {
  warn(obj: Record<string, unknown>): void;
}
