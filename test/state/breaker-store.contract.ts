import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AdmitResult, BreakerPolicy, BreakerStore } from '../../src/state/breaker-store.js';

export interface BreakerStoreHarness {
  store: BreakerStore;
  /** Wait until the store's background work (a shared store's replies and messages) has settled. */
  settle(): Promise<void>;
  cleanup?(): Promise<void>;
}

const policy: BreakerPolicy = { failureThreshold: 3, cooldownMs: 10_000 };

/**
 * The breaker state machine every BreakerStore shares (the memory store's, which the shared store
 * must keep whether or not it is alone). Times are passed in, so nothing waits on a clock; `settle`
 * lets a shared store's replies arrive, so the checks after it also cover what the shared state says.
 */
export function breakerStoreContract(name: string, makeStore: () => Promise<BreakerStoreHarness>): void {
  describe(`BreakerStore contract: ${name}`, () => {
    let h: BreakerStoreHarness;
    let store: BreakerStore;
    const admit = async (id: string, now: number, p = policy): Promise<AdmitResult> => store.admit(id, now, p);

    /** Circuit `id` opened at `at`. */
    async function opened(id = 't', at = 1000): Promise<void> {
      store.onFailure(id, at - 2, policy);
      store.onFailure(id, at - 1, policy);
      expect(store.onFailure(id, at, policy)).toEqual({ from: 'closed', to: 'open' });
      await h.settle();
      expect(store.status(id)).toBe('open');
    }

    beforeEach(async () => {
      h = await makeStore();
      store = h.store;
    });
    afterEach(async () => {
      await h.settle();
      await h.cleanup?.();
    });

    it('an unknown circuit is closed and passes, synchronously', async () => {
      expect(store.status('t')).toBe('closed');
      expect(store.peek('t', 0, policy)).toEqual({ kind: 'pass' });
      const r = store.admit('t', 0, policy);
      expect(r instanceof Promise).toBe(false);
      expect(r).toEqual({ admission: { kind: 'pass' } });
    });

    it('failures below the threshold keep it closed; the threshold-th opens it', async () => {
      expect(store.onFailure('t', 1, policy)).toBeUndefined();
      expect(store.onFailure('t', 2, policy)).toBeUndefined();
      await h.settle();
      expect(store.status('t')).toBe('closed');
      expect(store.peek('t', 2, policy)).toEqual({ kind: 'pass' });
      expect(store.onFailure('t', 3, policy)).toEqual({ from: 'closed', to: 'open' });
      expect(store.status('t')).toBe('open');
      await h.settle();
      expect(store.status('t')).toBe('open');
    });

    it('further failures while open change nothing (no transition, the cooldown is not extended)', async () => {
      await opened('t', 1000);
      expect(store.onFailure('t', 5000, policy)).toBeUndefined();
      await h.settle();
      expect(store.peek('t', 11_000, policy)).toEqual({ kind: 'probe' });
    });

    it('open: refuses with the time left until the cooldown ends (at least 1000 ms)', async () => {
      await opened('t', 1000);
      expect(store.peek('t', 1000, policy)).toEqual({ kind: 'open', retryAfterMs: 10_000 });
      expect(store.peek('t', 4000, policy)).toEqual({ kind: 'open', retryAfterMs: 7000 });
      expect(store.peek('t', 10_500, policy)).toEqual({ kind: 'open', retryAfterMs: 1000 });
      expect(await admit('t', 4000)).toEqual({ admission: { kind: 'open', retryAfterMs: 7000 } });
      expect(store.status('t')).toBe('open');
    });

    it('peek has no side effects: it reports the probe any number of times without taking it', async () => {
      await opened('t', 1000);
      expect(store.peek('t', 11_000, policy)).toEqual({ kind: 'probe' });
      expect(store.peek('t', 11_000, policy)).toEqual({ kind: 'probe' });
      expect(store.status('t')).toBe('open');
      expect(await admit('t', 11_000)).toEqual({ admission: { kind: 'probe' }, transition: { from: 'open', to: 'half-open' } });
    });

    it('admit takes the one probe: half-open, and everyone else is refused until it settles', async () => {
      await opened('t', 1000);
      await admit('t', 11_000);
      expect(store.status('t')).toBe('half-open');
      await h.settle();
      expect(store.status('t')).toBe('half-open');
      expect(store.peek('t', 11_001, policy)).toEqual({ kind: 'open', retryAfterMs: 1000 });
      expect(await admit('t', 11_001)).toEqual({ admission: { kind: 'open', retryAfterMs: 1000 } });
      expect(await admit('t', 99_000)).toEqual({ admission: { kind: 'open', retryAfterMs: 1000 } });
    });

    it('onSuccess of the probe closes the circuit; it then takes the full threshold to open again', async () => {
      await opened('t', 1000);
      await admit('t', 11_000);
      expect(store.onSuccess('t')).toEqual({ from: 'half-open', to: 'closed' });
      expect(store.status('t')).toBe('closed');
      expect(store.peek('t', 11_001, policy)).toEqual({ kind: 'pass' });
      expect(store.onSuccess('t')).toBeUndefined();
      await h.settle();
      expect(store.status('t')).toBe('closed');
      expect(store.onFailure('t', 12_000, policy)).toBeUndefined();
      expect(store.onFailure('t', 12_001, policy)).toBeUndefined();
      expect(store.onFailure('t', 12_002, policy)).toEqual({ from: 'closed', to: 'open' });
      await h.settle();
      expect(store.status('t')).toBe('open');
    });

    it('onSuccess while closed resets the failure count, with no transition', async () => {
      store.onFailure('t', 1, policy);
      store.onFailure('t', 2, policy);
      expect(store.onSuccess('t')).toBeUndefined();
      await h.settle();
      expect(store.onFailure('t', 3, policy)).toBeUndefined();
      expect(store.onFailure('t', 4, policy)).toBeUndefined();
      await h.settle();
      expect(store.status('t')).toBe('closed');
      expect(store.onFailure('t', 5, policy)).toEqual({ from: 'closed', to: 'open' });
    });

    it('onFailure of the probe re-opens the circuit from that moment', async () => {
      await opened('t', 1000);
      await admit('t', 12_000);
      expect(store.onFailure('t', 12_500, policy)).toEqual({ from: 'half-open', to: 'open' });
      expect(store.status('t')).toBe('open');
      await h.settle();
      expect(store.status('t')).toBe('open');
      expect(store.peek('t', 13_500, policy)).toEqual({ kind: 'open', retryAfterMs: 9000 });
      expect(store.peek('t', 22_500, policy)).toEqual({ kind: 'probe' });
      expect(await admit('t', 22_500)).toEqual({ admission: { kind: 'probe' }, transition: { from: 'open', to: 'half-open' } });
    });

    it('releaseProbe lets another request probe, with no new transition', async () => {
      await opened('t', 1000);
      await admit('t', 11_000);
      store.releaseProbe('t');
      expect(store.status('t')).toBe('half-open');
      expect(store.peek('t', 11_001, policy)).toEqual({ kind: 'probe' });
      expect(await admit('t', 11_001)).toEqual({ admission: { kind: 'probe' } });
      expect(await admit('t', 11_002)).toEqual({ admission: { kind: 'open', retryAfterMs: 1000 } });
    });

    it('releaseProbe on a closed or unknown circuit is harmless', async () => {
      store.releaseProbe('t');
      expect(store.status('t')).toBe('closed');
      await opened('u', 1000);
      store.releaseProbe('u');
      await h.settle();
      expect(store.peek('u', 2000, policy)).toEqual({ kind: 'open', retryAfterMs: 9000 });
    });

    it('keeps circuits apart', async () => {
      await opened('a', 1000);
      expect(store.status('b')).toBe('closed');
      expect(store.peek('b', 1000, policy)).toEqual({ kind: 'pass' });
    });

    it('the policy is read at decision time (a shorter cooldown lets the probe through sooner)', async () => {
      await opened('t', 1000);
      expect(store.peek('t', 2000, { failureThreshold: 3, cooldownMs: 1000 })).toEqual({ kind: 'probe' });
      expect(await admit('t', 2000, { failureThreshold: 3, cooldownMs: 1000 })).toEqual({
        admission: { kind: 'probe' },
        transition: { from: 'open', to: 'half-open' },
      });
    });

    it('a late success from a request admitted before the circuit opened does not close it', async () => {
      await opened('t', 1000);
      expect(store.onSuccess('t')).toBeUndefined();
      await h.settle();
      expect(store.status('t')).toBe('open');
      expect(store.peek('t', 1001, policy).kind).toBe('open');
    });

    it('a threshold of 1 opens on the first failure', async () => {
      expect(store.onFailure('t', 5, { failureThreshold: 1, cooldownMs: 100 })).toEqual({ from: 'closed', to: 'open' });
      await h.settle();
      expect(store.peek('t', 50, policy)).toEqual({ kind: 'open', retryAfterMs: 9955 });
    });
  });
}
