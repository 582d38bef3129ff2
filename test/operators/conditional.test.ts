import { describe, expect, it } from 'vitest';
import { conditional } from '../../src/operators/conditional.js';
import { newScheduler } from '../helpers/marbles.js';

describe('conditional', () => {
  it('subscribes the child at the index pick returns, and no other', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-a|');
      const b = cold('--b|');
      const c = cold('-c|');
      expectObservable(conditional({ children: [() => a, () => b, () => c], pick: () => 1 })()).toBe('--b|');
      expectSubscriptions(a.subscriptions).toBe([]);
      expectSubscriptions(b.subscriptions).toBe('^--!');
      expectSubscriptions(c.subscriptions).toBe([]);
    });
  });

  it('picks at subscription time, not when built, and again for each subscription', () => {
    let index = 0;
    let picks = 0;
    const built: number[] = [];
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-a|');
      const b = cold('-b|');
      const children = [a, b].map((o, i) => () => {
        built.push(i);
        return o;
      });
      const pick = (): number => {
        picks++;
        return index;
      };
      const routed = conditional({ children, pick })();
      expect(picks).toBe(0);
      expect(built).toEqual([]);
      expectObservable(routed).toBe('-a|');
      expectObservable(routed, '10ms ^').toBe('11ms b|');
      expectSubscriptions(a.subscriptions).toBe('^-!');
      expectSubscriptions(b.subscriptions).toBe('10ms ^-!');
      // runs at frame 5, between the two subscriptions
      cold('-----x').subscribe(() => (index = 1));
    });
    expect(picks).toBe(2);
    expect(built).toEqual([0, 1]);
  });

  it('unsubscribing reaches the chosen child', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-----a|');
      expectObservable(conditional({ children: [() => a], pick: () => 0 })(), '^--!').toBe('');
      expectSubscriptions(a.subscriptions).toBe('^--!');
    });
  });
});
