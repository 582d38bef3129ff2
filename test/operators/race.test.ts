import { throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { race } from '../../src/operators/race.js';
import { newScheduler, upstreamError as upstream } from '../helpers/marbles.js';

describe('race (staggered hedge)', () => {
  it('starts contender 0 at once and the next one hedgeAfterMs later while none has emitted', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const c0 = cold('-------------a|');
      const c1 = cold('   ----------b|');
      const c2 = cold('      ------c|');
      // nobody emits before 13: all three have started (0, 3, 6); c2 emits first at 12
      expectObservable(race({ children: [() => c0, () => c1, () => c2], hedgeAfterMs: 3, scheduler: s })()).toBe('------------c|');
      expectSubscriptions(c0.subscriptions).toBe('^-----------!');
      expectSubscriptions(c1.subscriptions).toBe('---^--------!');
      expectSubscriptions(c2.subscriptions).toBe('------^------!');
    });
  });

  it('the first to emit wins; the losers are unsubscribed at that frame and reported', () => {
    const s = newScheduler();
    const losers: number[] = [];
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const c0 = cold('----------a|');
      const c1 = cold('   -----b-b|');
      const c2 = cold('      -----c|');
      expectObservable(race({ children: [() => c0, () => c1, () => c2], hedgeAfterMs: 3, scheduler: s, onLoser: (i) => losers.push(i) })()).toBe('--------b-b|');
      expectSubscriptions(c0.subscriptions).toBe('^-------!');
      expectSubscriptions(c1.subscriptions).toBe('---^-------!');
      expectSubscriptions(c2.subscriptions).toBe('------^-!');
    });
    expect(losers.sort()).toEqual([0, 2]);
  });

  it('does not start the next contender when the first emits before hedgeAfterMs', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const c0 = cold('--a|');
      const c1 = cold('-b|');
      expectObservable(race({ children: [() => c0, () => c1], hedgeAfterMs: 3, scheduler: s })()).toBe('--a|');
      expectSubscriptions(c0.subscriptions).toBe('^--!');
      expectSubscriptions(c1.subscriptions).toBe([]);
    });
  });

  it('a failing contender does not fail the race and starts the next contender immediately', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const c0 = cold('-#', undefined, upstream(503));
      const c1 = cold(' --b|');
      const c2 = cold('-c|');
      // hedge is 5 ms, but c1 starts at 1, when c0 fails
      expectObservable(race({ children: [() => c0, () => c1, () => c2], hedgeAfterMs: 5, scheduler: s })()).toBe('---b|');
      expectSubscriptions(c0.subscriptions).toBe('^!');
      expectSubscriptions(c1.subscriptions).toBe('-^--!');
      expectSubscriptions(c2.subscriptions).toBe([]);
    });
  });

  it('a contender failing while another still runs does not start the next early', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const c0 = cold('-------a|');
      const c1 = cold('   -#', undefined, upstream(500));
      const c2 = cold('      -----c|');
      expectObservable(race({ children: [() => c0, () => c1, () => c2], hedgeAfterMs: 3, scheduler: s })()).toBe('-------a|');
      expectSubscriptions(c0.subscriptions).toBe('^-------!');
      expectSubscriptions(c1.subscriptions).toBe('---^!');
      // started on the hedge schedule (3 ms after c1), not when c1 failed at 4
      expectSubscriptions(c2.subscriptions).toBe('------^!');
    });
  });

  it('a contender that errors synchronously starts the next at once', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const c1 = cold('--b|');
      const c2 = cold('-c|');
      expectObservable(race({ children: [() => throwError(() => upstream(502)), () => c1, () => c2], hedgeAfterMs: 5, scheduler: s })()).toBe('--b|');
      expectSubscriptions(c1.subscriptions).toBe('^--!');
      expectSubscriptions(c2.subscriptions).toBe([]);
    });
  });

  it('when all fail, the answer is the last error', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable }) => {
      const e0 = upstream(500);
      const e1 = upstream(503);
      const c0 = cold('-#', undefined, e0);
      const c1 = cold(' --#', undefined, e1);
      expectObservable(race({ children: [() => c0, () => c1], hedgeAfterMs: 10, scheduler: s })()).toBe('---#', undefined, e1);
    });
  });

  it('when all fail, the last to fail gives the error (not the last index)', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable }) => {
      const e0 = upstream(500);
      const e1 = upstream(503);
      const c0 = cold('-----#', undefined, e0);
      const c1 = cold('  -#', undefined, e1);
      expectObservable(race({ children: [() => c0, () => c1], hedgeAfterMs: 2, scheduler: s })()).toBe('-----#', undefined, e0);
    });
  });

  it("the winner's later error is the race's error", () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = new GatewayError('stream_interrupted');
      const c0 = cold('-a-#', undefined, err);
      const c1 = cold('-b|');
      expectObservable(race({ children: [() => c0, () => c1], hedgeAfterMs: 2, scheduler: s })()).toBe('-a-#', undefined, err);
      expectSubscriptions(c1.subscriptions).toBe([]);
    });
  });

  it('unsubscribing the race unsubscribes every contender and stops the hedge', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const c0 = cold('----------a|');
      const c1 = cold('  --------b|');
      const c2 = cold('    ------c|');
      const c3 = cold('-d|');
      expectObservable(race({ children: [() => c0, () => c1, () => c2, () => c3], hedgeAfterMs: 2, scheduler: s })(), '^----!').toBe('');
      expectSubscriptions(c0.subscriptions).toBe('^----!');
      expectSubscriptions(c1.subscriptions).toBe('--^--!');
      expectSubscriptions(c2.subscriptions).toBe('----^!');
      expectSubscriptions(c3.subscriptions).toBe([]);
    });
  });

  it('hedgeAfterMs 0 starts all contenders at once', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const c0 = cold('---a|');
      const c1 = cold('-b|');
      const c2 = cold('--c|');
      expectObservable(race({ children: [() => c0, () => c1, () => c2], hedgeAfterMs: 0, scheduler: s })()).toBe('-b|');
      expectSubscriptions(c0.subscriptions).toBe('^!');
      expectSubscriptions(c1.subscriptions).toBe('^-!');
      expectSubscriptions(c2.subscriptions).toBe('^!');
    });
  });

  it('builds each contender only when it starts, per subscription', () => {
    const s = newScheduler();
    const built: number[] = [];
    s.run(({ cold, expectObservable }) => {
      const contenders = [0, 1, 2].map((i) => () => {
        built.push(i);
        return cold('--x|');
      });
      const r = race({ children: contenders, hedgeAfterMs: 5, scheduler: s })();
      expect(built).toEqual([]);
      expectObservable(r).toBe('--x|');
      expectObservable(r, '10ms ^').toBe('12ms x|');
    });
    expect(built).toEqual([0, 0]);
  });

  it('completes at once with no contenders', () => {
    const s = newScheduler();
    s.run(({ expectObservable }) => {
      expectObservable(race({ children: [], hedgeAfterMs: 5, scheduler: s })()).toBe('|');
    });
  });
});
