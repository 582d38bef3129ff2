/**
 * The least_latency loadbalance (power of two choices on a decaying EWMA × (1 + in flight)): the
 * draw of two candidates, then the operator in virtual time, its clock the TestScheduler's and its
 * random fixed, so the first candidate is child 0 and the second child 1.
 */
import { mergeMap, take, timer, type Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { loadbalance, pickTwoChoices, type Weighted } from '../../src/operators/loadbalance.js';
import type { AttemptVerdict } from '../../src/operators/measure-latency.js';
import { LatencyBoard, type LatencyBoardOptions } from '../../src/state/latency-board.js';
import { newScheduler, upstreamError } from '../helpers/marbles.js';

const noneEligible = () => new GatewayError('circuit_open');
const verdict = (err: unknown): AttemptVerdict => (err instanceof GatewayError && err.code === 'circuit_open' ? 'none' : 'failure');

/** A least_latency loadbalance over `runs`, its board's clock the scheduler's. */
function setup(sched: TestScheduler, runs: (() => Observable<string>)[], extra: LatencyBoardOptions & { weights?: number[]; eligible?: (() => boolean)[] } = {}) {
  const { weights, eligible, ...opts } = extra;
  const children: Weighted<string>[] = runs.map((run, i) => ({ weight: weights?.[i] ?? 1, eligible: eligible?.[i] ?? (() => true), run }));
  // random 0: the first candidate is child 0 and the second child 1 (when both may be picked).
  const board = new LatencyBoard(runs.length, opts);
  const lb = loadbalance({ children, random: () => 0, noneEligible, leastLatency: { board, now: () => sched.now(), classify: verdict } });
  return { board, lb: lb() };
}

/** Subscribe to `lb` every `every` frames, `n` times: the served values in order. */
function drive(lb: Observable<string>, n: number, every: number): Observable<string> {
  return timer(0, every).pipe(take(n), mergeMap(() => lb));
}

describe('pickTwoChoices', () => {
  const randoms = (...xs: number[]) => () => xs.shift()!;
  const calls: [number, number][] = [];
  const first = (a: number, b: number): number => (calls.push([a, b]), a);

  it('draws two distinct candidates by weight and lets `better` decide', () => {
    calls.length = 0;
    expect(pickTwoChoices([1, 1, 1], randoms(0.5, 0.9), (_a, b) => b)).toBe(2);
    expect(pickTwoChoices([1, 1, 1], randoms(0.5, 0.4), first)).toBe(1);
    // The second draw is over the rest: 0.4 of [1, 0, 1] is child 0.
    expect(calls).toEqual([[1, 0]]);
  });

  it('never draws a weight-0 child; one candidate is taken without `better`; none is -1', () => {
    calls.length = 0;
    expect(pickTwoChoices([0, 3, 0], randoms(0.9, 0.9), first)).toBe(1);
    expect(pickTwoChoices([0, 0], randoms(0.1, 0.1), first)).toBe(-1);
    expect(calls).toEqual([]);
  });
});

describe('least_latency loadbalance (marbles)', () => {
  it('tries each target once, then sends the traffic to the fast one', () => {
    const sched = newScheduler();
    sched.run(({ cold, expectObservable, expectSubscriptions }) => {
      const slow = cold('-----s|');
      const fast = cold('-f|');
      const { lb } = setup(sched, [() => slow, () => fast]);
      expectObservable(lb).toBe('-----s|'); // neither has samples: the first candidate
      expectObservable(lb, '10ms ^').toBe('11ms f|'); // the fast one has none yet: it is preferred
      expectObservable(lb, '20ms ^').toBe('21ms f|'); // 5 ms against 1 ms
      expectObservable(lb, '30ms ^').toBe('31ms f|');
      expectSubscriptions(slow.subscriptions).toBe('^-----!');
      expectSubscriptions(fast.subscriptions).toBe(['10ms ^-!', '20ms ^-!', '30ms ^-!']);
    });
  });

  it('a slow target is tried again once its EWMA has decayed, and takes traffic back when fast', () => {
    const sched = newScheduler();
    const served: string[] = [];
    let aSlow = true;
    sched.run(({ cold }) => {
      const slowA = cold('----------a|');
      const fastA = cold('-a|');
      const b = cold('--b|');
      const { lb } = setup(sched, [() => (aSlow ? slowA : fastA), () => b], { halfLifeMs: 50 });
      // A is slow for its first answer (10 ms against B's 2 ms), fast after it.
      sched.schedule(() => (aSlow = false), 15);
      drive(lb, 40, 20).subscribe((v) => served.push(v));
    });
    expect(served[0]).toBe('a');
    expect(served[1]).toBe('b');
    // A is left alone until 10 ms, halving every 50 ms, falls clearly under B's 2 ms...
    const back = served.indexOf('a', 1);
    expect(served.slice(1, 5)).toEqual(['b', 'b', 'b', 'b']);
    expect(back).toBeGreaterThan(5);
    // ... and, fast now, it is picked again: near-ties go to the first candidate (A).
    expect(served.slice(back).filter((v) => v === 'a').length).toBeGreaterThan((served.length - back) / 2);
  });

  it('a target that stays slow gets only the occasional probe', () => {
    const sched = newScheduler();
    const served: string[] = [];
    sched.run(({ cold }) => {
      const a = cold('----------a|');
      const b = cold('-b|');
      const { lb } = setup(sched, [() => a, () => b], { halfLifeMs: 50 });
      drive(lb, 200, 10).subscribe((v) => served.push(v));
    });
    const probes = served.filter((v) => v === 'a').length;
    expect(probes).toBeGreaterThanOrEqual(2); // it was tried again
    expect(probes).toBeLessThan(20); // but B has nearly all of the traffic
  });

  it('skips a target whose circuit is open, however fast it was', () => {
    const sched = newScheduler();
    let bOpen = false;
    sched.run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-----a|');
      const b = cold('-b|');
      const { lb } = setup(sched, [() => a, () => b], { eligible: [() => true, () => !bOpen] });
      expectObservable(lb).toBe('-----a|');
      expectObservable(lb, '10ms ^').toBe('11ms b|');
      sched.schedule(() => (bOpen = true), 15);
      expectObservable(lb, '20ms ^').toBe('25ms a|');
      expectObservable(lb, '30ms ^').toBe('35ms a|');
      expectSubscriptions(b.subscriptions).toBe('10ms ^-!');
    });
  });

  it('counts the attempts in flight: a busy target loses to an idle one of the same latency', () => {
    const sched = newScheduler();
    sched.run(({ cold, expectObservable }) => {
      // Each answers its first value after 2 ms and stays in flight 20 ms more (a stream).
      const a = cold('--a 19ms |');
      const b = cold('--b 19ms |');
      const { lb } = setup(sched, [() => a, () => b]);
      expectObservable(lb).toBe('--a 19ms |');
      expectObservable(lb, '1ms ^').toBe('3ms b 19ms |');
      // Both sampled at 2 ms and idle: a near-tie goes to the first candidate.
      expectObservable(lb, '40ms ^').toBe('42ms a 19ms |');
      // A has one in flight: 2 × (1 + 1) against 2 × (1 + 0).
      expectObservable(lb, '45ms ^').toBe('47ms b 19ms |');
      // Both busy: 2 × 2 against 2 × 2, the first candidate again.
      expectObservable(lb, '50ms ^').toBe('52ms a 19ms |');
    });
  });

  it('a busy target with no sample yet is weighed by the other, not preferred', () => {
    const sched = newScheduler();
    sched.run(({ cold, expectObservable }) => {
      const a = cold('--a|');
      const b = cold('-----b|');
      const { lb, board } = setup(sched, [() => a, () => b]);
      expectObservable(lb).toBe('--a|');
      // B has no sample and is idle: preferred.
      expectObservable(lb, '5ms ^').toBe('10ms b|');
      // B still has no sample but one in flight: scored 2 × (1 + 1) against A's 2 × (1 + 0).
      expectObservable(lb, '6ms ^').toBe('8ms a|');
      sched.schedule(() => expect(board.entries.map((e) => e.inFlight)).toEqual([1, 1]), 7);
    });
  });

  it('a failed attempt is a penalty sample; a refused one (open circuit) leaves none', () => {
    const sched = newScheduler();
    sched.run(({ cold, expectObservable }) => {
      const a = cold('-#', undefined, upstreamError(503));
      const b = cold('--b|');
      const { lb, board } = setup(sched, [() => a, () => b], { failureSampleMs: 1000 });
      expectObservable(lb).toBe('-#', undefined, upstreamError(503));
      expectObservable(lb, '10ms ^').toBe('12ms b|');
      // A failed after 1 ms but counts 1 s: B is taken although slower.
      expectObservable(lb, '20ms ^').toBe('22ms b|');
      sched.schedule(() => expect(board.entries[0]!.ewma).toBe(1000), 30);
    });
    const refused = newScheduler();
    refused.run(({ cold, expectObservable }) => {
      const a = cold('-#', undefined, new GatewayError('circuit_open'));
      const { lb, board } = setup(refused, [() => a]);
      expectObservable(lb).toBe('-#', undefined, new GatewayError('circuit_open'));
      refused.schedule(() => expect(board.entries[0]).toEqual({ ewma: undefined, at: 0, inFlight: 0 }), 5);
    });
  });

  it('a cancelled attempt leaves no sample and frees its in-flight slot', () => {
    const sched = newScheduler();
    sched.run(({ cold, expectObservable }) => {
      const a = cold('-----a|');
      const { lb, board } = setup(sched, [() => a]);
      expectObservable(lb, '^ 2ms !').toBe('');
      sched.schedule(() => expect(board.entries[0]).toEqual({ ewma: undefined, at: 0, inFlight: 0 }), 5);
    });
  });
});
