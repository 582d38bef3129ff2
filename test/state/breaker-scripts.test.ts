import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIT_SHARED, type Circuit, CLOSED, FAILURE, reduce, refuse, RELEASE, type Step, SUCCESS } from '../../src/state/breaker-machine.js';
import type { Admission, BreakerPolicy, Transition } from '../../src/state/breaker-store.js';
import { breakerKeys, breakerScripts, type BreakerScripts, type Reply, scriptArgs } from '../../src/state/redis/breaker-scripts.js';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';
import { seededRandom } from '../../src/util/prng.js';
import { deleteByPrefix, REDIS_URL } from './redis-test-utils.js';

/**
 * The Lua scripts write the breaker machine a second time (they must run atomically in Redis). This
 * drives the reducer and the scripts with the same events and compares, after every event, the
 * state, the transition and (for admit) the answer. Instance A is the one the reducer models; events
 * of another instance B reach the reducer the way the Redis mirror learns them: as the shared state.
 */
type Op = 'fail' | 'succeed' | 'admit' | 'release';
interface Ev {
  who: 'A' | 'B';
  op: Op;
  now: number;
}

const policy: BreakerPolicy = { failureThreshold: 3, cooldownMs: 10_000 };
/** Longer than any sequence's clock, so no lease lapses mid-sequence (on Redis' clock or the model's). */
const LEASE_MS = 1e9;

describe('breaker Lua scripts = the breaker machine (127.0.0.1:6379)', () => {
  const runPrefix = `sluice-test:${randomUUID()}:`;
  let conn: RedisConnection;
  let scripts: BreakerScripts;
  beforeAll(async () => {
    conn = createRedis(REDIS_URL);
    await conn.waitUntilReady(3000);
    scripts = breakerScripts(conn.client);
  });
  afterAll(async () => {
    await deleteByPrefix(conn, runPrefix);
    await conn.close();
  });

  let n = 0;
  /** Run `events` on a fresh circuit through both, comparing after each event (named in the failure). */
  async function compare(events: Ev[]): Promise<void> {
    const keys = breakerKeys(`${runPrefix}${n++}:`);
    const args = (who: 'A' | 'B') => scriptArgs(keys, 't', who, 60_000);
    let c: Circuit = CLOSED;
    for (const [i, ev] of events.entries()) {
      const where = `event ${i} (${ev.who} ${ev.op} at ${ev.now})`;
      let reply: Reply;
      if (ev.op === 'fail') reply = await scripts.fail(args(ev.who), ev.now, policy.failureThreshold);
      else if (ev.op === 'succeed') reply = await scripts.succeed(args(ev.who));
      else if (ev.op === 'release') reply = await scripts.release(args(ev.who));
      else reply = await scripts.probe(args(ev.who), ev.now, policy.cooldownMs, LEASE_MS);

      if (ev.who === 'A') {
        const step: Step =
          ev.op === 'fail'
            ? reduce(c, FAILURE, ev.now, policy)
            : ev.op === 'succeed'
              ? reduce(c, SUCCESS)
              : ev.op === 'release'
                ? reduce(c, RELEASE)
                : reduce(c, ADMIT_SHARED, ev.now, policy);
        c = step.state;
        const luaTransition: Transition | undefined = reply.from !== reply.status ? { from: reply.from, to: reply.status } : undefined;
        expect(step.transition, where).toEqual(luaTransition);
        if (ev.op === 'admit') expect(step.admission, where).toEqual(verdict(reply));
      } else {
        // B's change reaches A as the shared state (a message or a reply)
        c = reduce(c, { type: 'shared', shared: reply, self: 'A' }).state;
      }
      expect(
        { status: c.status, failures: c.failures, openedAt: c.openedAt, probing: c.probing, leased: c.leasedUntil > ev.now },
        where,
      ).toEqual({ status: reply.status, failures: reply.failures, openedAt: reply.openedAt, probing: reply.owner === 'A', leased: reply.owner === 'B' });
    }
  }

  /** The store's reading of a probe script's answer. */
  function verdict(r: Reply): Admission {
    return r.verdict === 'granted' ? { kind: 'probe' } : r.verdict === 'closed' ? { kind: 'pass' } : refuse(r.left);
  }

  const seq = (...evs: [Ev['who'], Op, number][]): Ev[] => evs.map(([who, op, now]) => ({ who, op, now }));

  it.each<[string, Ev[]]>([
    ['failures open at the threshold; more change nothing', seq(['A', 'fail', 1], ['A', 'fail', 2], ['A', 'fail', 3], ['A', 'fail', 4], ['A', 'admit', 5000])],
    ['a success resets the count', seq(['A', 'fail', 1], ['A', 'fail', 2], ['A', 'succeed', 3], ['A', 'fail', 4], ['A', 'fail', 5])],
    ['a late success does not close an open circuit', seq(['A', 'fail', 1], ['A', 'fail', 2], ['A', 'fail', 3], ['A', 'succeed', 4], ['A', 'admit', 5])],
    ['the probe: one at a time; success closes', seq(['A', 'fail', 1], ['A', 'fail', 2], ['A', 'fail', 3], ['A', 'admit', 10_003], ['A', 'admit', 10_004], ['A', 'succeed', 10_005], ['A', 'admit', 10_006])],
    ['the probe fails: re-opens from then', seq(['A', 'fail', 1], ['A', 'fail', 2], ['A', 'fail', 3], ['A', 'admit', 10_003], ['A', 'fail', 10_500], ['A', 'admit', 20_499], ['A', 'admit', 20_500])],
    ['a released probe lets the next one probe', seq(['A', 'fail', 1], ['A', 'fail', 2], ['A', 'fail', 3], ['A', 'admit', 10_003], ['A', 'release', 10_004], ['A', 'admit', 10_005])],
    ['a probe held by B refuses A until B releases it', seq(['A', 'fail', 1], ['A', 'fail', 2], ['A', 'fail', 3], ['B', 'admit', 10_003], ['A', 'admit', 10_004], ['A', 'release', 10_005], ['B', 'release', 10_006], ['A', 'admit', 10_007])],
    ['B closes while A waits; B re-opens while A probes', seq(['A', 'fail', 1], ['A', 'fail', 2], ['A', 'fail', 3], ['B', 'admit', 10_003], ['B', 'succeed', 10_004], ['A', 'admit', 10_005], ['B', 'fail', 10_006], ['B', 'fail', 10_007], ['B', 'fail', 10_008], ['A', 'admit', 20_008], ['B', 'fail', 20_009], ['A', 'admit', 20_010])],
  ])('%s', async (_, events) => {
    await compare(events);
  });

  it('agree on 40 seeded random sequences of 60 events from two instances', async () => {
    const rand = seededRandom(0xb4ea);
    const ops: Op[] = ['fail', 'fail', 'fail', 'succeed', 'admit', 'admit', 'release'];
    for (let s = 0; s < 40; s++) {
      let now = 0;
      const events: Ev[] = [];
      for (let i = 0; i < 60; i++) {
        now += Math.floor(rand() * 4000);
        events.push({ who: rand() < 0.7 ? 'A' : 'B', op: ops[Math.floor(rand() * ops.length)]!, now });
      }
      await compare(events);
    }
  });
});
