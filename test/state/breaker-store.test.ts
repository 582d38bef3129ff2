import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BreakerPolicy, Transition } from '../../src/state/breaker-store.js';
import { MemoryBreakerStore } from '../../src/state/memory/breaker-store.js';
import { RedisBreakerStore, type RedisBreakerStoreOptions } from '../../src/state/redis/breaker-store.js';
import { breakerKeys } from '../../src/state/redis/breaker-scripts.js';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';
import { breakerStoreContract } from './breaker-store.contract.js';
import { deleteByPrefix, nextEvent, REDIS_URL } from './redis-test-utils.js';

breakerStoreContract('MemoryBreakerStore', async () => ({ store: new MemoryBreakerStore(), settle: async () => {} }));

const policy: BreakerPolicy = { failureThreshold: 3, cooldownMs: 10_000 };

/** Resolves with the next remote transition of `id` on a store built with `events`. */
function transitions() {
  const listeners = new Set<(id: string, t: Transition) => void>();
  return {
    onRemoteTransition: (id: string, t: Transition) => listeners.forEach((l) => l(id, t)),
    next(id: string, to: Transition['to'], what: string): Promise<Transition> {
      return nextEvent<Transition>(
        (cb) => {
          const l = (i: string, t: Transition) => i === id && t.to === to && cb(t);
          listeners.add(l);
          return () => listeners.delete(l);
        },
        3000,
        what,
      );
    },
  };
}

describe('RedisBreakerStore (127.0.0.1:6379)', () => {
  const runPrefix = `sluice-test:${randomUUID()}:`;
  let connA: RedisConnection;
  let connB: RedisConnection;
  const ops: string[] = [];
  beforeAll(async () => {
    connA = createRedis(REDIS_URL, { observer: { operation: (store, op) => ops.push(`${store}:${op}`) } });
    connB = createRedis(REDIS_URL);
    await Promise.all([connA.waitUntilReady(3000), connB.waitUntilReady(3000)]);
  });
  afterAll(async () => {
    await deleteByPrefix(connA, runPrefix);
    await Promise.all([connA.close(), connB.close()]);
  });

  let n = 0;
  breakerStoreContract('RedisBreakerStore', async () => {
    const prefix = `${runPrefix}${n++}:`;
    const store = new RedisBreakerStore(connA, { prefix });
    await store.ready(3000);
    return {
      store,
      settle: () => store.flush(),
      cleanup: async () => {
        store.close();
        await deleteByPrefix(connA, prefix);
      },
    };
  });

  /** Two instances (two connections) sharing one prefix. */
  async function pair(opts: RedisBreakerStoreOptions = {}) {
    const prefix = `${runPrefix}pair${n++}:`;
    const ea = transitions();
    const eb = transitions();
    const a = new RedisBreakerStore(connA, { prefix, ...opts, onRemoteTransition: ea.onRemoteTransition });
    const b = new RedisBreakerStore(connB, { prefix, ...opts, onRemoteTransition: eb.onRemoteTransition });
    await Promise.all([a.ready(3000), b.ready(3000)]);
    return { a, b, ea, eb, prefix, close: () => (a.close(), b.close()) };
  }

  it('failures on A open the circuit for B, as soon as the change is published', async () => {
    const { a, b, eb, close } = await pair();
    try {
      const opened = eb.next('t', 'open', 'B to learn that t opened');
      a.onFailure('t', 1000, policy);
      a.onFailure('t', 1001, policy);
      expect(a.onFailure('t', 1002, policy)).toEqual({ from: 'closed', to: 'open' });
      expect(await opened).toEqual({ from: 'closed', to: 'open' });
      expect(b.status('t')).toBe('open');
      expect(b.peek('t', 2002, policy)).toEqual({ kind: 'open', retryAfterMs: 9000 });
      // refused from B's mirror, synchronously: no Redis round trip
      expect(b.admit('t', 2002, policy)).toEqual({ admission: { kind: 'open', retryAfterMs: 9000 } });
    } finally {
      close();
    }
  });

  it('failures counted on different instances add up in the shared count', async () => {
    const { a, b, ea, close } = await pair();
    try {
      const opened = ea.next('t', 'open', 'A to learn that t opened');
      a.onFailure('t', 1000, policy);
      a.onFailure('t', 1001, policy);
      await a.flush();
      b.onFailure('t', 1002, policy); // the third failure of the cluster
      await b.flush();
      expect(b.status('t')).toBe('open');
      await opened;
      expect(a.status('t')).toBe('open');
    } finally {
      close();
    }
  });

  it('after the cooldown exactly one of A and B gets the probe when both ask at once; its success closes for both', async () => {
    const { a, b, ea, eb, close } = await pair();
    try {
      const openOnB = eb.next('t', 'open', 'B to learn that t opened');
      a.onFailure('t', 1000, policy);
      a.onFailure('t', 1000, policy);
      a.onFailure('t', 1000, policy);
      await openOnB;
      expect(a.peek('t', 11_000, policy)).toEqual({ kind: 'probe' });
      expect(b.peek('t', 11_000, policy)).toEqual({ kind: 'probe' });

      const ra = a.admit('t', 11_000, policy);
      const rb = b.admit('t', 11_000, policy);
      expect(ra).toBeInstanceOf(Promise); // the cooldown is over: ask the shared state
      const [xa, xb] = await Promise.all([ra, rb]);
      const kinds = [xa.admission.kind, xb.admission.kind].sort();
      expect(kinds).toEqual(['open', 'probe']);
      const [winner, loser, loserEvents, winnerName] = xa.admission.kind === 'probe' ? [a, b, eb, 'a'] : [b, a, ea, 'b'];
      expect((winnerName === 'a' ? xa : xb).transition).toEqual({ from: 'open', to: 'half-open' });
      expect((winnerName === 'a' ? xb : xa).admission).toEqual({ kind: 'open', retryAfterMs: 1000 });
      expect(loser.status('t')).toBe('half-open');
      // the loser's mirror knows the probe is taken elsewhere: it refuses without asking
      expect(loser.peek('t', 11_500, policy)).toEqual({ kind: 'open', retryAfterMs: 1000 });

      const closed = loserEvents.next('t', 'closed', 'the loser to learn that t closed');
      expect(winner.onSuccess('t')).toEqual({ from: 'half-open', to: 'closed' });
      expect(await closed).toEqual({ from: 'half-open', to: 'closed' });
      expect(loser.peek('t', 11_600, policy)).toEqual({ kind: 'pass' });
    } finally {
      close();
    }
  });

  it('a cancelled probe is released for the cluster: another instance may probe', async () => {
    const { a, b, eb, close } = await pair();
    try {
      const openOnB = eb.next('t', 'open', 'B to learn that t opened');
      for (let i = 0; i < 3; i++) a.onFailure('t', 1000, policy);
      await openOnB;
      const halfOnB = eb.next('t', 'half-open', 'B to learn of the probe');
      expect((await a.admit('t', 11_000, policy)).admission).toEqual({ kind: 'probe' });
      await halfOnB;
      // past the end of the lease as B's mirror knows it, B asks Redis, which refuses: the lease is held
      expect(await b.admit('t', 80_000, policy)).toEqual({ admission: { kind: 'open', retryAfterMs: 1000 } });
      a.releaseProbe('t');
      await a.flush();
      expect(await b.admit('t', 80_001, policy)).toEqual({ admission: { kind: 'probe' } });
      expect(b.status('t')).toBe('half-open');
    } finally {
      close();
    }
  });

  it('a probe whose owner never answers is taken by another instance after its lease', async () => {
    const { a, b, eb, close } = await pair({ probeLeaseMs: 150 });
    try {
      const openOnB = eb.next('t', 'open', 'B to learn that t opened');
      for (let i = 0; i < 3; i++) a.onFailure('t', 1000, policy);
      await openOnB;
      expect((await a.admit('t', 11_000, policy)).admission).toEqual({ kind: 'probe' });
      expect((await b.admit('t', 11_001, policy)).admission.kind).toBe('open');
      // the lease runs on Redis' clock: poll (bounded) until it lapses
      const deadline = Date.now() + 3000;
      let got = (await b.admit('t', 11_200, policy)).admission.kind;
      while (got !== 'probe' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        got = (await b.admit('t', 11_200, policy)).admission.kind;
      }
      expect(got).toBe('probe');
    } finally {
      close();
    }
  });

  it('a late success on another instance does not close an open circuit', async () => {
    const { a, b, eb, close } = await pair();
    try {
      const openOnB = eb.next('t', 'open', 'B to learn that t opened');
      for (let i = 0; i < 3; i++) a.onFailure('t', 1000, policy);
      await openOnB;
      expect(b.onSuccess('t')).toBeUndefined();
      await b.flush();
      expect(b.status('t')).toBe('open');
      expect(a.status('t')).toBe('open');
    } finally {
      close();
    }
  });

  it('the healthy hot path makes no Redis call; failures do, and the state lives in one hash', async () => {
    const prefix = `${runPrefix}hot:`;
    const store = new RedisBreakerStore(connA, { prefix });
    await store.ready(3000);
    try {
      ops.length = 0;
      for (let i = 0; i < 100; i++) {
        expect(store.admit('hot', i, policy)).toEqual({ admission: { kind: 'pass' } });
        expect(store.onSuccess('hot')).toBeUndefined();
      }
      expect(store.peek('hot', 100, policy)).toEqual({ kind: 'pass' });
      expect(ops).toEqual([]);

      store.onFailure('hot', 200, policy);
      await store.flush();
      expect(ops).toEqual(['redis-breaker:fail']);
      const keys = breakerKeys(prefix);
      expect(await connA.client.hgetall(keys.state('hot'))).toMatchObject({ status: 'closed', failures: '1' });
      // a success now has something to reset: one call, and the hash is gone
      store.onSuccess('hot');
      await store.flush();
      expect(ops).toEqual(['redis-breaker:fail', 'redis-breaker:succeed']);
      expect(await connA.client.exists(keys.state('hot'))).toBe(0);
    } finally {
      store.close();
    }
  });
});
