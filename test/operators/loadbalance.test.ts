import { of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { loadbalance, pickWeighted, type Weighted } from '../../src/operators/loadbalance.js';
import { seededRandom } from '../../src/util/prng.js';
import { newScheduler } from '../helpers/marbles.js';

/** The project's seeded PRNG (mulberry32), so the split test is repeatable. */
const mulberry32 = seededRandom;

/** Hands out the given numbers in turn. */
const randoms = (...xs: number[]) => {
  let i = 0;
  return () => {
    if (i >= xs.length) throw new Error('random called too often');
    return xs[i++]!;
  };
};

describe('pickWeighted', () => {
  it.each<[string, number[], number, number]>([
    ['[1,1] low half → 0', [1, 1], 0, 0],
    ['[1,1] just under the middle → 0', [1, 1], 0.4999, 0],
    ['[1,1] the middle → 1', [1, 1], 0.5, 1],
    ['[1,1] top → 1', [1, 1], 0.999999, 1],
    ['[0,1] at 0 → never 0', [0, 1], 0, 1],
    ['[0,1] at 0.999999', [0, 1], 0.999999, 1],
    ['[1,0] at 0.999999 → never 1', [1, 0], 0.999999, 0],
    ['[3,1] at 0', [3, 1], 0, 0],
    ['[3,1] just under 0.75', [3, 1], 0.7499, 0],
    ['[3,1] at 0.75', [3, 1], 0.75, 1],
    ['[3,1] at 0.999999', [3, 1], 0.999999, 1],
    ['[1,2,7] at 0.999999', [1, 2, 7], 0.999999, 2],
    ['[1,2,7] at 0.1', [1, 2, 7], 0.1, 1],
    ['[1,2,7] at 0.29', [1, 2, 7], 0.29, 1],
    ['[1,2,7] at 0.3', [1, 2, 7], 0.3, 2],
    ['[2,0,2] skips the zero in the middle', [2, 0, 2], 0.5, 2],
    ['negative weights count as 0', [-5, 1], 0, 1],
    ['all zero → -1', [0, 0], 0.5, -1],
    ['empty → -1', [], 0.5, -1],
    ['all negative → -1', [-1, -2], 0.1, -1],
  ])('%s', (_name, weights, random, expected) => {
    expect(pickWeighted(weights, random)).toBe(expected);
  });

  it('returns the last weighted index when random*total rounds up to total', () => {
    expect(pickWeighted([0.1, 0.2, 0], 1)).toBe(1);
  });
});

describe('loadbalance', () => {
  const child = <T>(run: Weighted<T>['run'], weight = 1, eligible = () => true): Weighted<T> => ({ weight, eligible, run });
  const noneEligible = () => new GatewayError('circuit_open');

  it('subscribes only the chosen child', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-a|');
      const b = cold('--b|');
      expectObservable(loadbalance({ children: [child(() => a), child(() => b)], random: () => 0.9, noneEligible })()).toBe('--b|');
      expectSubscriptions(a.subscriptions).toBe([]);
      expectSubscriptions(b.subscriptions).toBe('^--!');
    });
  });

  it('chooses per subscription, not when built', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-a|');
      const b = cold('-b|');
      const lb = loadbalance({ children: [child(() => a), child(() => b)], random: randoms(0.1, 0.9, 0.2), noneEligible })();
      expectObservable(lb).toBe('-a|');
      expectObservable(lb, '10ms ^').toBe('11ms b|');
      expectObservable(lb, '20ms ^').toBe('21ms a|');
      expectSubscriptions(a.subscriptions).toBe(['^-!', '20ms ^-!']);
      expectSubscriptions(b.subscriptions).toBe('10ms ^-!');
    });
  });

  it('never chooses an ineligible child, and asks eligibility at subscription time', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-a|');
      const b = cold('-b|');
      const lb = loadbalance({ children: [child(() => a), child(() => b, 1, () => false)], random: () => 0.9, noneEligible })();
      expectObservable(lb).toBe('-a|');
      expectSubscriptions(a.subscriptions).toBe('^-!');
      expectSubscriptions(b.subscriptions).toBe([]);
    });
    // eligibility is read at each subscription
    let bUp = true;
    const picks: string[] = [];
    const lb = loadbalance({ children: [child(() => of('a')), child(() => of('b'), 1, () => bUp)], random: () => 0.9, noneEligible })();
    lb.subscribe((v) => picks.push(v));
    bUp = false;
    lb.subscribe((v) => picks.push(v));
    expect(picks).toEqual(['b', 'a']);
  });

  it('never chooses a weight-0 child', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-a|');
      const b = cold('-b|');
      expectObservable(loadbalance({ children: [child(() => a, 0), child(() => b, 1)], random: () => 0, noneEligible })()).toBe('-b|');
      expectSubscriptions(a.subscriptions).toBe([]);
    });
  });

  it('errors with noneEligible when no child is eligible, subscribing none', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-a|');
      const b = cold('-b|');
      const err = new GatewayError('circuit_open', undefined, { headers: { 'retry-after': '7' } });
      const lb = loadbalance({ children: [child(() => a, 1, () => false), child(() => b, 0)], random: () => 0.5, noneEligible: () => err })();
      expectObservable(lb).toBe('#', undefined, err);
      expectSubscriptions(a.subscriptions).toBe([]);
      expectSubscriptions(b.subscriptions).toBe([]);
    });
  });

  it('splits 10,000 picks by weight [1,2,7] within ±2 percentage points (seeded)', () => {
    const counts = [0, 0, 0];
    const lb = loadbalance({ children: [0, 1, 2].map((i) => child(() => of(i), [1, 2, 7][i])), random: mulberry32(20240601), noneEligible })();
    for (let n = 0; n < 10_000; n++) lb.subscribe((i) => counts[i]!++);
    expect(counts.reduce((a, b) => a + b)).toBe(10_000);
    const shares = counts.map((c) => (c / 10_000) * 100);
    expect(Math.abs(shares[0]! - 10)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares[1]! - 20)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares[2]! - 70)).toBeLessThanOrEqual(2);
  });
});
