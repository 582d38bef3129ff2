import { defer, of, type Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { circuitBreaker, circuitOpenError, countsAsFailure, type CircuitBreakerOptions } from '../../src/operators/circuit-breaker.js';
import type { CircuitStatus, Transition } from '../../src/state/breaker-store.js';
import { MemoryBreakerStore } from '../../src/state/memory/breaker-store.js';
import { newScheduler, upstreamError as upstream } from '../helpers/marbles.js';

const e503 = upstream(503);

const openError = (retryAfterSeconds: string) =>
  expect.objectContaining({ name: 'GatewayError', code: 'circuit_open', status: 503, headers: { 'retry-after': retryAfterSeconds } });

/** Each subscription takes the next observable: attempt 1, attempt 2, ... (each with its own subscription log). */
function sequence<T>(...attempts: Observable<T>[]): Observable<T> {
  let n = 0;
  return defer(() => {
    const next = attempts[n++];
    if (!next) throw new Error(`unexpected subscription #${n}`);
    return next;
  });
}

function setup(s: TestScheduler, o: Partial<CircuitBreakerOptions> = {}) {
  const store = new MemoryBreakerStore();
  const states: [CircuitStatus, Transition | undefined][] = [];
  const options: CircuitBreakerOptions = {
    store,
    id: 't1',
    policy: { failureThreshold: 2, cooldownMs: 5000 },
    now: () => s.now(),
    onState: (status, transition) => states.push([status, transition]),
    ...o,
  };
  return { store, states, guard: <T>(src: Observable<T>) => src.pipe(circuitBreaker<T>(options)) };
}

describe('circuitBreaker', () => {
  it('opens at the failure threshold: the next subscription errors at once with circuit_open and Retry-After = seconds left, the source untouched', () => {
    const s = newScheduler();
    const { store, guard } = setup(s);
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const f1 = cold('-#', undefined, e503);
      const f2 = cold('-#', undefined, e503);
      const never = cold('-a|');
      const guarded = guard(sequence(f1, f2, never));
      expectObservable(guarded, '^').toBe('-#', undefined, e503);
      // second failure at 11 opens the circuit (cooldown 5000 → until 5011)
      expectObservable(guarded, '10ms ^').toBe('11ms #', undefined, e503);
      // at 2000: 3011 ms left → Retry-After 4 (rounded up)
      expectObservable(guarded, '2000ms ^').toBe('2000ms #', undefined, openError('4'));
      // at 4500: 511 ms left → Retry-After 1
      expectObservable(guarded, '4500ms ^').toBe('4500ms #', undefined, openError('1'));
      expectSubscriptions(f1.subscriptions).toBe('^!');
      expectSubscriptions(f2.subscriptions).toBe('10ms ^!');
      expectSubscriptions(never.subscriptions).toBe([]);
    });
    expect(store.status('t1')).toBe('open');
  });

  it('emits an actual GatewayError instance when open', () => {
    const s = newScheduler();
    const { store, guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 5000 } });
    store.onFailure('t1', 0, { failureThreshold: 1, cooldownMs: 5000 });
    let err: unknown;
    s.run(({ cold }) => {
      guard(cold('-a|')).subscribe({ error: (e) => (err = e) });
    });
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).toBody('t').error).toMatchObject({ code: 'circuit_open', type: 'server_error' });
  });

  it('counts consecutive failures: a success in between resets the count', () => {
    const s = newScheduler();
    const { store, guard } = setup(s);
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const f1 = cold('-#', undefined, e503);
      const ok = cold('-a|');
      const f2 = cold('-#', undefined, e503);
      const after = cold('-b|');
      const guarded = guard(sequence(f1, ok, f2, after));
      expectObservable(guarded, '^').toBe('-#', undefined, e503);
      expectObservable(guarded, '10ms ^').toBe('11ms a|');
      expectObservable(guarded, '20ms ^').toBe('21ms #', undefined, e503);
      // only one failure since the success: still closed, the source is subscribed
      expectObservable(guarded, '30ms ^').toBe('31ms b|');
      expectSubscriptions(after.subscriptions).toBe('30ms ^-!');
    });
    expect(store.status('t1')).toBe('closed');
  });

  it('after the cooldown lets exactly one probe through; a concurrent second subscription is refused', () => {
    const s = newScheduler();
    const { guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 100 } });
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const f1 = cold('-#', undefined, e503); // opens at 1, cooldown until 101
      const probe = cold('--------a|');
      const other = cold('-b|');
      const guarded = guard(sequence(f1, probe, other));
      expectObservable(guarded, '^').toBe('-#', undefined, e503);
      expectObservable(guarded, '101ms ^').toBe('109ms a|');
      // while the probe is in flight: refused (Retry-After floor of 1 s), the source is not subscribed
      expectObservable(guarded, '103ms ^').toBe('103ms #', undefined, openError('1'));
      // once the probe succeeded the circuit is closed
      expectObservable(guarded, '120ms ^').toBe('121ms b|');
      expectSubscriptions(probe.subscriptions).toBe('101ms ^--------!');
      expectSubscriptions(other.subscriptions).toBe('120ms ^-!');
    });
  });

  it('refuses before the cooldown has passed', () => {
    const s = newScheduler();
    const { guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 100 } });
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const f1 = cold('-#', undefined, e503);
      const probe = cold('-a|');
      const guarded = guard(sequence(f1, probe));
      expectObservable(guarded, '^').toBe('-#', undefined, e503);
      expectObservable(guarded, '100ms ^').toBe('100ms #', undefined, openError('1'));
      expectObservable(guarded, '101ms ^').toBe('102ms a|');
      expectSubscriptions(probe.subscriptions).toBe('101ms ^-!');
    });
  });

  it('a successful probe closes the circuit and reports closed → open → half-open → closed', () => {
    const s = newScheduler();
    const { store, states, guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 100 } });
    s.run(({ cold, expectObservable }) => {
      const guarded = guard(sequence(cold('-#', undefined, e503), cold('-a|')));
      expectObservable(guarded, '^').toBe('-#', undefined, e503);
      expectObservable(guarded, '200ms ^').toBe('201ms a|');
    });
    expect(states).toEqual([
      ['open', { from: 'closed', to: 'open' }],
      ['half-open', { from: 'open', to: 'half-open' }],
      ['closed', { from: 'half-open', to: 'closed' }],
    ]);
    expect(store.status('t1')).toBe('closed');
  });

  it('a probe that completes without a value closes the circuit too', () => {
    const s = newScheduler();
    const { store, guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 100 } });
    s.run(({ cold, expectObservable }) => {
      const guarded = guard(sequence(cold('-#', undefined, e503), cold('--|')));
      expectObservable(guarded, '^').toBe('-#', undefined, e503);
      expectObservable(guarded, '200ms ^').toBe('202ms |');
    });
    expect(store.status('t1')).toBe('closed');
  });

  it('a failed probe re-opens the circuit for a fresh cooldown', () => {
    const s = newScheduler();
    const { store, states, guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 3000 } });
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const f1 = cold('-#', undefined, e503); // open at 1 until 3001
      const probe = cold('--#', undefined, e503); // probe at 3001 fails at 3003: open until 6003
      const next = cold('-a|');
      const guarded = guard(sequence(f1, probe, next));
      expectObservable(guarded, '^').toBe('-#', undefined, e503);
      expectObservable(guarded, '3001ms ^').toBe('3003ms #', undefined, e503);
      // at 3004: 2999 ms left of the new cooldown → Retry-After 3
      expectObservable(guarded, '3004ms ^').toBe('3004ms #', undefined, openError('3'));
      expectObservable(guarded, '6003ms ^').toBe('6004ms a|');
      expectSubscriptions(probe.subscriptions).toBe('3001ms ^-!');
      expectSubscriptions(next.subscriptions).toBe('6003ms ^-!');
    });
    expect(states.map(([st]) => st)).toEqual(['open', 'half-open', 'open', 'half-open', 'closed']);
    expect(states[2]![1]).toEqual({ from: 'half-open', to: 'open' });
    expect(store.status('t1')).toBe('closed');
  });

  it('a cancelled probe (unsubscribed before any value) releases the slot for the next request', () => {
    const s = newScheduler();
    const { store, states, guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 100 } });
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const f1 = cold('-#', undefined, e503);
      const cancelled = cold('-----a|');
      const next = cold('-b|');
      const guarded = guard(sequence(f1, cancelled, next));
      expectObservable(guarded, '^').toBe('-#', undefined, e503);
      expectObservable(guarded, '200ms ^--!').toBe('');
      expectObservable(guarded, '205ms ^').toBe('206ms b|');
      expectSubscriptions(cancelled.subscriptions).toBe('200ms ^--!');
      expectSubscriptions(next.subscriptions).toBe('205ms ^-!');
    });
    // re-probing from half-open is not a new transition
    expect(states.map(([st]) => st)).toEqual(['open', 'half-open', 'closed']);
    expect(store.status('t1')).toBe('closed');
  });

  it('a cancelled request that was not a probe does not touch the state', () => {
    const s = newScheduler();
    const { store, guard } = setup(s, { policy: { failureThreshold: 2, cooldownMs: 100 } });
    s.run(({ cold, expectObservable }) => {
      const guarded = guard(sequence(cold('-#', undefined, e503), cold('-----a|'), cold('-#', undefined, e503)));
      expectObservable(guarded, '^').toBe('-#', undefined, e503);
      expectObservable(guarded, '10ms ^-!').toBe('');
      // the earlier failure still counts: this second one opens the circuit
      expectObservable(guarded, '20ms ^').toBe('21ms #', undefined, e503);
    });
    expect(store.status('t1')).toBe('open');
  });

  it('4xx upstream errors are not failures', () => {
    const s = newScheduler();
    const { store, guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 100 } });
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const e429 = upstream(429);
      const e400 = upstream(400);
      const after = cold('-a|');
      const guarded = guard(sequence(cold('-#', undefined, e429), cold('-#', undefined, e400), after));
      expectObservable(guarded, '^').toBe('-#', undefined, e429);
      expectObservable(guarded, '10ms ^').toBe('11ms #', undefined, e400);
      expectObservable(guarded, '20ms ^').toBe('21ms a|');
      expectSubscriptions(after.subscriptions).toBe('20ms ^-!');
    });
    expect(store.status('t1')).toBe('closed');
  });

  it('failure_status_codes narrows what counts', () => {
    const s = newScheduler();
    const { store, guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 100 }, failureStatusCodes: [503] });
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const e500 = upstream(500);
      const third = cold('-a|');
      const guarded = guard(sequence(cold('-#', undefined, e500), cold('-#', undefined, e503), third));
      expectObservable(guarded, '^').toBe('-#', undefined, e500);
      // 500 did not count: still closed
      expectObservable(guarded, '10ms ^').toBe('11ms #', undefined, e503);
      // 503 counted: open
      expectObservable(guarded, '20ms ^').toBe('20ms #', undefined, openError('1'));
      expectSubscriptions(third.subscriptions).toBe([]);
    });
    expect(store.status('t1')).toBe('open');
  });

  it('failure_status_codes can make a 4xx count', () => {
    const s = newScheduler();
    const { store, guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 100 }, failureStatusCodes: [429] });
    s.run(({ cold, expectObservable }) => {
      const e429 = upstream(429);
      expectObservable(guard(cold('-#', undefined, e429))).toBe('-#', undefined, e429);
    });
    expect(store.status('t1')).toBe('open');
  });

  it.each([
    ['upstream_unreachable', new GatewayError('upstream_unreachable')],
    ['upstream_invalid_response', new GatewayError('upstream_invalid_response')],
    ['stream_interrupted', new GatewayError('stream_interrupted')],
    ['request_timeout', new GatewayError('request_timeout')],
    ['upstream_timeout', new GatewayError('upstream_timeout')],
    ['a plain Error', new Error('socket hang up')],
  ])('%s counts as a failure, even when failure_status_codes is narrowed', (_name, err) => {
    const s = newScheduler();
    const { store, guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 100 }, failureStatusCodes: [503] });
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const after = cold('-a|');
      const guarded = guard(sequence(cold('-#', undefined, err), after));
      expectObservable(guarded, '^').toBe('-#', undefined, err);
      expectObservable(guarded, '10ms ^').toBe('10ms #', undefined, openError('1'));
      expectSubscriptions(after.subscriptions).toBe([]);
    });
    expect(store.status('t1')).toBe('open');
  });

  it('an error after the first value does not count (the first value was the verdict)', () => {
    const s = newScheduler();
    const { store, guard } = setup(s, { policy: { failureThreshold: 1, cooldownMs: 100 } });
    s.run(({ cold, expectObservable }) => {
      const err = new GatewayError('stream_interrupted');
      expectObservable(guard(cold('-a-#', undefined, err))).toBe('-a-#', undefined, err);
    });
    expect(store.status('t1')).toBe('closed');
  });

  it('keeps circuits apart by id', () => {
    const s = newScheduler();
    const store = new MemoryBreakerStore();
    const policy = { failureThreshold: 1, cooldownMs: 100 };
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const b = cold('-a|');
      expectObservable(cold('-#', undefined, e503).pipe(circuitBreaker({ store, id: 'a', policy, now: () => s.now() }))).toBe('-#', undefined, e503);
      expectObservable(b.pipe(circuitBreaker({ store, id: 'b', policy, now: () => s.now() })), '10ms ^').toBe('11ms a|');
      expectSubscriptions(b.subscriptions).toBe('10ms ^-!');
    });
    expect(store.status('a')).toBe('open');
    expect(store.status('b')).toBe('closed');
  });

  it('tells onRefused when the open circuit refuses, before the error travels down, and not otherwise', () => {
    const store = new MemoryBreakerStore();
    const policy = { failureThreshold: 1, cooldownMs: 5000 };
    const seen: string[] = [];
    const guarded = (src: Observable<string>) =>
      src.pipe(circuitBreaker<string>({ store, id: 'r', policy, now: () => 0, onRefused: () => seen.push('refused') }));
    guarded(of('a')).subscribe({ next: () => seen.push('next') });
    store.onFailure('r', 0, policy);
    guarded(of('b')).subscribe({ error: (e: GatewayError) => seen.push(e.code) });
    expect(seen).toEqual(['next', 'refused', 'circuit_open']);
  });

  it('throws at build time for a failure_threshold below 1', () => {
    const store = new MemoryBreakerStore();
    expect(() => circuitBreaker({ store, id: 'x', policy: { failureThreshold: 0, cooldownMs: 1 }, now: () => 0 })).toThrow(/failure_threshold/);
    expect(() => circuitBreaker({ store, id: 'x', policy: { failureThreshold: Number.NaN, cooldownMs: 1 }, now: () => 0 })).toThrow(/failure_threshold/);
  });
});

describe('countsAsFailure', () => {
  it.each<[string, unknown, readonly number[] | undefined, boolean]>([
    ['upstream 500, default', upstream(500), undefined, true],
    ['upstream 502, default', upstream(502), undefined, true],
    ['upstream 499, default', upstream(499), undefined, false],
    ['upstream 500, empty list = default', upstream(500), [], true],
    ['upstream 500, narrowed to 503', upstream(500), [503], false],
    ['circuit_open', new GatewayError('circuit_open'), undefined, false],
    ['invalid_config (a gateway decision)', new GatewayError('invalid_config'), undefined, false],
    ["internal_error (the gateway's own, 500)", new GatewayError('internal_error'), undefined, false],
    ['request_timeout', new GatewayError('request_timeout'), [503], true],
    ['plain Error', new Error('x'), undefined, true],
  ])('%s → %s', (_name, err, codes, expected) => {
    expect(countsAsFailure(err, codes)).toBe(expected);
  });
});

describe('circuitOpenError', () => {
  it.each([
    [1, '1'],
    [1000, '1'],
    [1001, '2'],
    [29_500, '30'],
  ])('%i ms left → Retry-After %s', (ms, header) => {
    const e = circuitOpenError(ms);
    expect(e.code).toBe('circuit_open');
    expect(e.status).toBe(503);
    expect(e.headers).toEqual({ 'retry-after': header });
  });

  it('a store that throws while recording never fails or hangs the request: the outcome passes through', () => {
    const s = newScheduler();
    const { store, guard } = setup(s);
    store.onFailure = () => {
      throw new Error('store broken');
    };
    store.onSuccess = () => {
      throw new Error('store broken');
    };
    s.run(({ cold, expectObservable }) => {
      expectObservable(guard(cold('5ms a |'))).toBe('5ms a |');
      expectObservable(guard(cold('5ms #', undefined, e503))).toBe('5ms #', undefined, e503);
    });
  });
});
