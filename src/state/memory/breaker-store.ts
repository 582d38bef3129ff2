import type { Admission, BreakerPolicy, BreakerStore, CircuitStatus, Transition } from '../breaker-store.js';

interface Entry {
  status: CircuitStatus;
  failures: number;
  openedAt: number;
  probing: boolean;
}

/**
 * In-process breaker state: consecutive failures open the circuit at the threshold; after the
 * cooldown exactly one request probes (half-open); its success closes, its failure re-opens.
 * Bounded: closed circuits with no failures hold no entry.
 */
export class MemoryBreakerStore implements BreakerStore {
  private readonly entries = new Map<string, Entry>();

  private decide(e: Entry | undefined, now: number, policy: BreakerPolicy): Admission {
    if (!e || e.status === 'closed') return { kind: 'pass' };
    const left = e.openedAt + policy.cooldownMs - now;
    if (left > 0 || e.probing) return { kind: 'open', retryAfterMs: Math.max(left, 1000) };
    return { kind: 'probe' };
  }

  peek(id: string, now: number, policy: BreakerPolicy): Admission {
    return this.decide(this.entries.get(id), now, policy);
  }

  admit(id: string, now: number, policy: BreakerPolicy): { admission: Admission; transition?: Transition } {
    const e = this.entries.get(id);
    const admission = this.decide(e, now, policy);
    if (admission.kind !== 'probe' || !e) return { admission };
    const from = e.status;
    e.status = 'half-open';
    e.probing = true;
    return { admission, transition: from === 'half-open' ? undefined : { from, to: 'half-open' } };
  }

  onSuccess(id: string): Transition | undefined {
    const e = this.entries.get(id);
    if (!e) return undefined;
    // A straggler admitted before the circuit opened does not close it: only the probe can.
    if (e.status === 'open') return undefined;
    this.entries.delete(id);
    return e.status === 'closed' ? undefined : { from: e.status, to: 'closed' };
  }

  onFailure(id: string, now: number, policy: BreakerPolicy): Transition | undefined {
    let e = this.entries.get(id);
    if (!e) {
      e = { status: 'closed', failures: 0, openedAt: 0, probing: false };
      this.entries.set(id, e);
    }
    if (e.status === 'half-open') {
      e.status = 'open';
      e.openedAt = now;
      e.probing = false;
      return { from: 'half-open', to: 'open' };
    }
    if (e.status === 'open') return undefined;
    e.failures++;
    if (e.failures >= policy.failureThreshold) {
      e.status = 'open';
      e.openedAt = now;
      return { from: 'closed', to: 'open' };
    }
    return undefined;
  }

  releaseProbe(id: string): void {
    const e = this.entries.get(id);
    if (e?.probing) e.probing = false;
  }

  status(id: string): CircuitStatus {
    return this.entries.get(id)?.status ?? 'closed';
  }
}
