/** Circuit-breaker state, behind a port so it can live in memory or be shared (Redis). */

export type CircuitStatus = 'closed' | 'open' | 'half-open';

export interface BreakerPolicy {
  failureThreshold: number;
  cooldownMs: number;
}

/** What a caller may do now. */
export type Admission =
  | { kind: 'pass' }
  /** The one half-open probe: its outcome closes or re-opens the circuit. */
  | { kind: 'probe' }
  | { kind: 'open'; retryAfterMs: number };

export interface Transition {
  from: CircuitStatus;
  to: CircuitStatus;
}

export interface AdmitResult {
  admission: Admission;
  transition?: Transition;
}

export interface BreakerStore {
  /** Would a request be let through now? No side effects (loadbalance uses it to pick). */
  peek(id: string, now: number, policy: BreakerPolicy): Admission;
  /**
   * Let a request through, taking the half-open probe when the cooldown has passed. A shared store
   * answers from its local view when it can and asks the shared state only to take the probe.
   */
  admit(id: string, now: number, policy: BreakerPolicy): AdmitResult | Promise<AdmitResult>;
  onSuccess(id: string): Transition | undefined;
  onFailure(id: string, now: number, policy: BreakerPolicy): Transition | undefined;
  /** A probe that ended with no verdict (cancelled): let another request probe. */
  releaseProbe(id: string): void;
  status(id: string): CircuitStatus;
}
