import type { CircuitStatus, Transition } from '../state/breaker-store.js';
import type { Endpoint, Usage } from '../config/wire.js';

/** Labels that identify a target in metrics: its name or path, and its provider. Never user data. */
export interface TargetLabels {
  target: string;
  provider: string;
  endpoint: Endpoint;
}

export type Outcome = 'success' | 'error' | 'timeout' | 'cancelled' | 'circuit_open';

/**
 * What operators report. Handed in through the pipeline deps; operators never import prom-client.
 */
export interface Telemetry {
  targetStarted(t: TargetLabels): void;
  /**
   * One upstream attempt ended. `status` is the HTTP status (0 for a transport error). `traceId`
   * (here and on the other latency figures): the request's, kept as its histogram bucket's exemplar.
   */
  targetFinished(t: TargetLabels, outcome: Outcome, status: number, seconds: number, traceId?: string): void;
  timeToFirstToken(t: TargetLabels, seconds: number, traceId?: string): void;
  tokens(t: TargetLabels, usage: Usage): void;
  retry(t: TargetLabels): void;
  /** A fallback node moved past a failed child. */
  fallback(node: string, from: string): void;
  circuit(target: string, status: CircuitStatus, transition?: Transition): void;
  /** A cache lookup's result (HIT, SEMANTIC_HIT, MISS, REFRESH, DISABLED) by mode. */
  cacheLookup(mode: string, result: string): void;
  /** A state store operation (cache, vectors, breaker) with its duration; failed ones count as errors. */
  storeOperation(store: string, operation: string, seconds: number, ok: boolean): void;
  /** Gateway-wide: the request's total time and the part not spent waiting on upstreams. */
  request(endpoint: string, status: number, totalSeconds: number, overheadSeconds: number, traceId?: string): void;
  /** One guardrail/hook check ran: its id (`default.<name>`), verdict (pass, fail, error) and time. */
  check(checkId: string, verdict: 'pass' | 'fail' | 'error', seconds: number): void;
  /** A hook denied a request or answer (446); `list` names its config list. */
  hookDenied(hookId: string, list: string): void;
  /** A hook's outcome recorded feedback (on_success / on_fail). */
  feedback(hookId: string, value: number, weight: number): void;
  /**
   * A request's answer was counted: its tokens, and its cost in USD when the price table knows the
   * model. `workspace` is the gateway key's workspace (`""`: none).
   */
  usage(workspace: string, provider: string, usage: Usage, costUsd: number | undefined): void;
  /** A usage-limit policy refused a request (412). */
  limitRejected(policyId: string): void;
  /** A usage-limit alert fired (once per period and group). */
  limitAlert(policyId: string): void;
  /** The usage counters could not be reached: the request was admitted without a reservation (fail open) or refused (503). */
  limitStoreError(outcome: 'admitted' | 'refused'): void;
}

export const noopTelemetry: Telemetry = {
  targetStarted() {},
  targetFinished() {},
  timeToFirstToken() {},
  tokens() {},
  retry() {},
  fallback() {},
  circuit() {},
  request() {},
  cacheLookup() {},
  storeOperation() {},
  check() {},
  hookDenied() {},
  feedback() {},
  usage() {},
  limitRejected() {},
  limitAlert() {},
  limitStoreError() {},
};
