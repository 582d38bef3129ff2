import { describe, expect, it } from 'vitest';
import type { BreakerPolicy } from '../../src/state/breaker-store.js';
import { MemoryBreakerStore } from '../../src/state/memory/breaker-store.js';

const policy: BreakerPolicy = { failureThreshold: 3, cooldownMs: 10_000 };

/** A store whose circuit `id` opened at `at`. */
function opened(id = 't', at = 1000): MemoryBreakerStore {
  const store = new MemoryBreakerStore();
  store.onFailure(id, at - 2, policy);
  store.onFailure(id, at - 1, policy);
  expect(store.onFailure(id, at, policy)).toEqual({ from: 'closed', to: 'open' });
  return store;
}

describe('MemoryBreakerStore', () => {
  it('an unknown circuit is closed and passes', () => {
    const store = new MemoryBreakerStore();
    expect(store.status('t')).toBe('closed');
    expect(store.peek('t', 0, policy)).toEqual({ kind: 'pass' });
    expect(store.admit('t', 0, policy)).toEqual({ admission: { kind: 'pass' } });
  });

  it('failures below the threshold keep it closed; the threshold-th opens it', () => {
    const store = new MemoryBreakerStore();
    expect(store.onFailure('t', 1, policy)).toBeUndefined();
    expect(store.onFailure('t', 2, policy)).toBeUndefined();
    expect(store.status('t')).toBe('closed');
    expect(store.peek('t', 2, policy)).toEqual({ kind: 'pass' });
    expect(store.onFailure('t', 3, policy)).toEqual({ from: 'closed', to: 'open' });
    expect(store.status('t')).toBe('open');
  });

  it('further failures while open change nothing (no transition, the cooldown is not extended)', () => {
    const store = opened('t', 1000);
    expect(store.onFailure('t', 5000, policy)).toBeUndefined();
    expect(store.peek('t', 11_000, policy)).toEqual({ kind: 'probe' });
  });

  it('open: refuses with the time left until the cooldown ends (at least 1000 ms)', () => {
    const store = opened('t', 1000);
    expect(store.peek('t', 1000, policy)).toEqual({ kind: 'open', retryAfterMs: 10_000 });
    expect(store.peek('t', 4000, policy)).toEqual({ kind: 'open', retryAfterMs: 7000 });
    expect(store.peek('t', 10_500, policy)).toEqual({ kind: 'open', retryAfterMs: 1000 });
    expect(store.admit('t', 4000, policy)).toEqual({ admission: { kind: 'open', retryAfterMs: 7000 } });
    expect(store.status('t')).toBe('open');
  });

  it('peek has no side effects: it reports the probe any number of times without taking it', () => {
    const store = opened('t', 1000);
    expect(store.peek('t', 11_000, policy)).toEqual({ kind: 'probe' });
    expect(store.peek('t', 11_000, policy)).toEqual({ kind: 'probe' });
    expect(store.status('t')).toBe('open');
    expect(store.admit('t', 11_000, policy)).toEqual({ admission: { kind: 'probe' }, transition: { from: 'open', to: 'half-open' } });
  });

  it('admit takes the one probe: half-open, and everyone else is refused until it settles', () => {
    const store = opened('t', 1000);
    store.admit('t', 11_000, policy);
    expect(store.status('t')).toBe('half-open');
    expect(store.peek('t', 11_001, policy)).toEqual({ kind: 'open', retryAfterMs: 1000 });
    expect(store.admit('t', 11_001, policy)).toEqual({ admission: { kind: 'open', retryAfterMs: 1000 } });
    expect(store.admit('t', 99_000, policy)).toEqual({ admission: { kind: 'open', retryAfterMs: 1000 } });
  });

  it('onSuccess of the probe closes the circuit and deletes the entry', () => {
    const store = opened('t', 1000);
    store.admit('t', 11_000, policy);
    expect(store.onSuccess('t')).toEqual({ from: 'half-open', to: 'closed' });
    expect(store.status('t')).toBe('closed');
    expect(store.peek('t', 11_001, policy)).toEqual({ kind: 'pass' });
    // the entry is gone: a second success reports nothing, and it takes the full threshold to open again
    expect(store.onSuccess('t')).toBeUndefined();
    expect(store.onFailure('t', 12_000, policy)).toBeUndefined();
    expect(store.onFailure('t', 12_001, policy)).toBeUndefined();
    expect(store.onFailure('t', 12_002, policy)).toEqual({ from: 'closed', to: 'open' });
  });

  it('onSuccess while closed resets the failure count, with no transition', () => {
    const store = new MemoryBreakerStore();
    store.onFailure('t', 1, policy);
    store.onFailure('t', 2, policy);
    expect(store.onSuccess('t')).toBeUndefined();
    expect(store.onFailure('t', 3, policy)).toBeUndefined();
    expect(store.onFailure('t', 4, policy)).toBeUndefined();
    expect(store.status('t')).toBe('closed');
  });

  it('onFailure of the probe re-opens the circuit from that moment', () => {
    const store = opened('t', 1000);
    store.admit('t', 12_000, policy);
    expect(store.onFailure('t', 12_500, policy)).toEqual({ from: 'half-open', to: 'open' });
    expect(store.status('t')).toBe('open');
    expect(store.peek('t', 13_500, policy)).toEqual({ kind: 'open', retryAfterMs: 9000 });
    expect(store.peek('t', 22_500, policy)).toEqual({ kind: 'probe' });
    expect(store.admit('t', 22_500, policy)).toEqual({ admission: { kind: 'probe' }, transition: { from: 'open', to: 'half-open' } });
  });

  it('releaseProbe lets another request probe, with no new transition', () => {
    const store = opened('t', 1000);
    store.admit('t', 11_000, policy);
    store.releaseProbe('t');
    expect(store.status('t')).toBe('half-open');
    expect(store.peek('t', 11_001, policy)).toEqual({ kind: 'probe' });
    expect(store.admit('t', 11_001, policy)).toEqual({ admission: { kind: 'probe' } });
    expect(store.admit('t', 11_002, policy)).toEqual({ admission: { kind: 'open', retryAfterMs: 1000 } });
  });

  it('releaseProbe on a closed or unknown circuit is harmless', () => {
    const store = new MemoryBreakerStore();
    store.releaseProbe('t');
    expect(store.status('t')).toBe('closed');
    const open = opened('u', 1000);
    open.releaseProbe('u');
    expect(open.peek('u', 2000, policy)).toEqual({ kind: 'open', retryAfterMs: 9000 });
  });

  it('keeps circuits apart', () => {
    const store = opened('a', 1000);
    expect(store.status('b')).toBe('closed');
    expect(store.peek('b', 1000, policy)).toEqual({ kind: 'pass' });
  });

  it('the policy is read at decision time (a shorter cooldown lets the probe through sooner)', () => {
    const store = opened('t', 1000);
    expect(store.peek('t', 2000, { failureThreshold: 3, cooldownMs: 1000 })).toEqual({ kind: 'probe' });
  });

  it('a late success from a request admitted before the circuit opened does not close it', () => {
    const store = opened('t', 1000);
    expect(store.onSuccess('t')).toBeUndefined();
    expect(store.status('t')).toBe('open');
    expect(store.peek('t', 1001, policy).kind).toBe('open');
  });
});
