import { ADMIT, admission, type Circuit, CLOSED, FAILURE, isIdle, reduce, RELEASE, type Step, SUCCESS } from '../breaker-machine.js';
import type { Admission, AdmitResult, BreakerPolicy, BreakerStore, CircuitStatus, Transition } from '../breaker-store.js';

/**
 * In-process breaker state: the breaker machine's (`../breaker-machine.ts`) state per circuit, moved
 * by its reducer. Bounded: closed circuits with no failures hold no entry.
 */
export class MemoryBreakerStore implements BreakerStore {
  private readonly circuits = new Map<string, Circuit>();

  peek(id: string, now: number, policy: BreakerPolicy): Admission {
    return admission(this.circuits.get(id), now, policy);
  }

  admit(id: string, now: number, policy: BreakerPolicy): AdmitResult {
    const c = this.circuits.get(id);
    const a = admission(c, now, policy);
    if (a.kind !== 'probe' || !c) return { admission: a };
    const step = this.apply(id, c, reduce(c, ADMIT, now, policy));
    return step.transition ? { admission: step.admission!, transition: step.transition } : { admission: step.admission! };
  }

  onSuccess(id: string): Transition | undefined {
    const c = this.circuits.get(id);
    return c && this.apply(id, c, reduce(c, SUCCESS)).transition;
  }

  onFailure(id: string, now: number, policy: BreakerPolicy): Transition | undefined {
    const c = this.circuits.get(id) ?? CLOSED;
    return this.apply(id, c, reduce(c, FAILURE, now, policy)).transition;
  }

  releaseProbe(id: string): void {
    const c = this.circuits.get(id);
    if (c) this.apply(id, c, reduce(c, RELEASE));
  }

  status(id: string): CircuitStatus {
    return this.circuits.get(id)?.status ?? 'closed';
  }

  private apply(id: string, before: Circuit, step: Step): Step {
    if (step.state === before) return step;
    if (isIdle(step.state)) this.circuits.delete(id);
    else this.circuits.set(id, step.state);
    return step;
  }
}
