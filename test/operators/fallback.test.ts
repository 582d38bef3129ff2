import { defer, throwError, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { fallback } from '../../src/operators/fallback.js';
import { newScheduler, upstreamError as upstream } from '../helpers/marbles.js';

const always = () => true;
const lazy = <T>(o: Observable<T>) => () => o;

describe('fallback', () => {
  it('the first success wins and later children are never subscribed', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('--x|');
      const b = cold('--y|');
      expectObservable(fallback({ children: [lazy(a), lazy(b)], shouldFallBack: always })()).toBe('--x|');
      expectSubscriptions(a.subscriptions).toBe('^--!');
      expectSubscriptions(b.subscriptions).toBe([]);
    });
  });

  it('moves on to the next child when one errors, at the frame of the error', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('--#', undefined, upstream(503));
      const b = cold('  --#', undefined, new GatewayError('upstream_unreachable'));
      const c = cold('    ---z|');
      expectObservable(fallback({ children: [lazy(a), lazy(b), lazy(c)], shouldFallBack: always })()).toBe('-------z|');
      expectSubscriptions(a.subscriptions).toBe('^-!');
      expectSubscriptions(b.subscriptions).toBe('--^-!');
      expectSubscriptions(c.subscriptions).toBe('----^---!');
    });
  });

  it('reports each move to onFallback with the index it left and the error', () => {
    const e0 = upstream(500);
    const e1 = upstream(429);
    const calls: [number, unknown][] = [];
    newScheduler().run(({ cold, expectObservable }) => {
      const children = [lazy(cold('-#', undefined, e0)), lazy(cold('-#', undefined, e1)), lazy(cold('-a|'))];
      expectObservable(fallback({ children, shouldFallBack: always, onFallback: (i, e) => calls.push([i, e]) })()).toBe('---a|');
    });
    expect(calls).toEqual([
      [0, e0],
      [1, e1],
    ]);
  });

  it('stops and propagates when shouldFallBack says no', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e400 = upstream(400);
      const a = cold('--#', undefined, e400);
      const b = cold('--y|');
      const only5xx = (e: unknown) => e instanceof GatewayError && e.status >= 500;
      expectObservable(fallback({ children: [lazy(a), lazy(b)], shouldFallBack: only5xx })()).toBe('--#', undefined, e400);
      expectSubscriptions(b.subscriptions).toBe([]);
    });
  });

  it('asks shouldFallBack about each error', () => {
    const seen: unknown[] = [];
    const e503 = upstream(503);
    const e400 = upstream(400);
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const c = cold('-z|');
      const decide = (e: unknown) => {
        seen.push(e);
        return (e as GatewayError).status >= 500;
      };
      const children = [lazy(cold('-#', undefined, e503)), lazy(cold('-#', undefined, e400)), lazy(c)];
      expectObservable(fallback({ children, shouldFallBack: decide })()).toBe('--#', undefined, e400);
      expectSubscriptions(c.subscriptions).toBe([]);
    });
    expect(seen).toEqual([e503, e400]);
  });

  it("answers with the last child's error when all fail", () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const e0 = upstream(500);
      const e1 = upstream(502);
      const e2 = new GatewayError('upstream_unreachable');
      const children = [e0, e1, e2].map((e) => lazy(cold('-#', undefined, e)));
      expectObservable(fallback({ children, shouldFallBack: always })()).toBe('---#', undefined, e2);
    });
  });

  it('does not ask shouldFallBack about the last child (its error is final)', () => {
    let asked = 0;
    newScheduler().run(({ cold, expectObservable }) => {
      const e = upstream(503);
      expectObservable(fallback({ children: [lazy(cold('-#', undefined, e))], shouldFallBack: () => (asked++, true) })()).toBe('-#', undefined, e);
    });
    expect(asked).toBe(0);
  });

  it('after a child emitted, its error propagates (no fallback)', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = new GatewayError('stream_interrupted');
      const a = cold('-x-#', undefined, err);
      const b = cold('-y|');
      expectObservable(fallback({ children: [lazy(a), lazy(b)], shouldFallBack: always })()).toBe('-x-#', undefined, err);
      expectSubscriptions(a.subscriptions).toBe('^--!');
      expectSubscriptions(b.subscriptions).toBe([]);
    });
  });

  it('unsubscribing mid-way unsubscribes the active child', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('--#', undefined, upstream(503));
      const b = cold('  ------y|');
      const c = cold('-z|');
      expectObservable(fallback({ children: [lazy(a), lazy(b), lazy(c)], shouldFallBack: always })(), '^----!').toBe('');
      expectSubscriptions(a.subscriptions).toBe('^-!');
      expectSubscriptions(b.subscriptions).toBe('--^--!');
      expectSubscriptions(c.subscriptions).toBe([]);
    });
  });

  it('a child that errors synchronously still falls through, and unsubscribe still reaches the active child', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const sync = upstream(500);
      const b = cold('-----y|');
      const children = [() => throwError(() => sync), () => defer(() => { throw upstream(502); }), lazy(b)];
      expectObservable(fallback({ children, shouldFallBack: always })(), '^--!').toBe('');
      expectSubscriptions(b.subscriptions).toBe('^--!');
    });
  });

  it('a synchronous failure followed by a success emits that success', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const b = cold('--y|');
      expectObservable(fallback({ children: [() => throwError(() => upstream(503)), lazy(b)], shouldFallBack: always })()).toBe('--y|');
      expectSubscriptions(b.subscriptions).toBe('^--!');
    });
  });

  it('builds each child lazily, only when it is tried, and again per subscription', () => {
    const built: number[] = [];
    newScheduler().run(({ cold, expectObservable }) => {
      const children = [0, 1, 2].map((i) => () => {
        built.push(i);
        return i === 1 ? cold('-a|') : cold('-#', undefined, upstream(503));
      });
      const f = fallback({ children, shouldFallBack: always })();
      expect(built).toEqual([]);
      expectObservable(f).toBe('--a|');
      expectObservable(f, '10ms ^').toBe('12ms a|');
    });
    expect(built).toEqual([0, 1, 0, 1]);
  });

  it('completes at once with no children', () => {
    newScheduler().run(({ expectObservable }) => {
      expectObservable(fallback({ children: [], shouldFallBack: always })()).toBe('|');
    });
  });
});
