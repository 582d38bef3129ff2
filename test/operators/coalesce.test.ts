import { defer, Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { coalesce } from '../../src/operators/coalesce.js';
import { Flow } from '../../src/upstream/flow.js';
import { newScheduler } from '../helpers/marbles.js';

/** A start function that counts its calls and hands out `source` (the upstream call is `defer(start)`). */
function starter<T>(source: Observable<T>) {
  const f = () => {
    f.calls++;
    return source;
  };
  f.calls = 0;
  return f;
}

describe('coalesce', () => {
  it('two subscribers to the same key share one source subscription', () => {
    const s = newScheduler();
    const inflight = new Map<string, Observable<string>>();
    let start!: ReturnType<typeof starter<string>>;
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('--a--b--c|');
      start = starter(source);
      expectObservable(defer(start).pipe(coalesce({ inflight, key: 'k' }))).toBe('--a--b--c|');
      expectObservable(defer(start).pipe(coalesce({ inflight, key: 'k' }))).toBe('--a--b--c|');
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
    expect(start.calls).toBe(1);
  });

  it('different keys do not share', () => {
    const s = newScheduler();
    const inflight = new Map<string, Observable<string>>();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('--a|');
      expectObservable(source.pipe(coalesce({ inflight, key: 'k1' }))).toBe('--a|');
      expectObservable(source.pipe(coalesce({ inflight, key: 'k2' }))).toBe('--a|');
      expectSubscriptions(source.subscriptions).toBe(['^--!', '^--!']);
    });
  });

  it('a late joiner gets the earlier values replayed at once, then the rest live', () => {
    const s = newScheduler();
    const inflight = new Map<string, Observable<string>>();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('--a-b------c|');
      expectObservable(source.pipe(coalesce({ inflight, key: 'k' }))).toBe('--a-b------c|');
      // joins at 6: a and b at once (a group takes 4 frames of the diagram), c live at 11
      expectObservable(source.pipe(coalesce({ inflight, key: 'k' })), '------^').toBe('------(ab)-c|');
      expectSubscriptions(source.subscriptions).toBe('^-----------!');
    });
  });

  it('the source is unsubscribed only when every subscriber has left', () => {
    const s = newScheduler();
    const inflight = new Map<string, Observable<string>>();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('--a--b--c--d|');
      expectObservable(source.pipe(coalesce({ inflight, key: 'k' })), '^---!').toBe('--a-');
      expectObservable(source.pipe(coalesce({ inflight, key: 'k' })), '--^-----!').toBe('--a--b--');
      expectSubscriptions(source.subscriptions).toBe('^-------!');
    });
  });

  it('one subscriber leaving does not stop the other', () => {
    const s = newScheduler();
    const inflight = new Map<string, Observable<string>>();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('--a--b--c|');
      expectObservable(source.pipe(coalesce({ inflight, key: 'k' })), '^---!').toBe('--a-');
      expectObservable(source.pipe(coalesce({ inflight, key: 'k' }))).toBe('--a--b--c|');
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
  });

  it('after completion a new subscriber starts a new source', () => {
    const s = newScheduler();
    const inflight = new Map<string, Observable<string>>();
    let n = 0;
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold('--a|');
      const second = cold('--b|');
      const sources = [first, second];
      const start = () => sources[n++]!;
      expectObservable(defer(start).pipe(coalesce({ inflight, key: 'k' }))).toBe('--a|');
      expectObservable(defer(start).pipe(coalesce({ inflight, key: 'k' })), '-----^').toBe('-------b|');
      expectSubscriptions(first.subscriptions).toBe('^--!');
      expectSubscriptions(second.subscriptions).toBe('-----^--!');
    });
    expect(n).toBe(2);
  });

  it('after an error a new subscriber starts a new source (errors are not replayed)', () => {
    const s = newScheduler();
    const inflight = new Map<string, Observable<string>>();
    let n = 0;
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const failing = cold('--#');
      const ok = cold('--b|');
      const sources = [failing, ok];
      const start = () => sources[n++]!;
      expectObservable(defer(start).pipe(coalesce({ inflight, key: 'k' }))).toBe('--#');
      expectObservable(defer(start).pipe(coalesce({ inflight, key: 'k' })), '----^').toBe('------b|');
      expectSubscriptions(failing.subscriptions).toBe('^-!');
      expectSubscriptions(ok.subscriptions).toBe('----^--!');
    });
  });

  it('after everyone left early a new subscriber starts afresh (no replay of the abandoned call)', () => {
    const s = newScheduler();
    const inflight = new Map<string, Observable<string>>();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a--b|');
      expectObservable(source.pipe(coalesce({ inflight, key: 'k' })), '^--!').toBe('-a-');
      expectObservable(source.pipe(coalesce({ inflight, key: 'k' })), '-----^').toBe('------a--b|');
      expectSubscriptions(source.subscriptions).toBe(['^--!', '-----^----!']);
    });
  });

  it('removes the map entry when the source completes, errors or is abandoned, and only then', () => {
    const s = newScheduler();
    const inflight = new Map<string, Observable<string>>();
    const seen: [number, boolean][] = [];
    s.run(({ cold, expectObservable }) => {
      const completes = cold('---a|');
      const errors = cold('---#');
      const abandoned = cold('-----a|');
      expectObservable(completes.pipe(coalesce({ inflight, key: 'done' }))).toBe('---a|');
      expectObservable(errors.pipe(coalesce({ inflight, key: 'err' }))).toBe('---#');
      expectObservable(abandoned.pipe(coalesce({ inflight, key: 'left' })), '^-!').toBe('--');
      // Scheduled from frame 0, after the subscriptions, so each check runs after the sources' own
      // actions of the same frame.
      s.schedule(() => {
        for (const t of [0, 1, 2, 3, 4, 5]) {
          s.schedule(() => {
            seen.push([t, inflight.has('done')]);
            seen.push([t + 100, inflight.has('err')]);
            seen.push([t + 200, inflight.has('left')]);
          }, t);
        }
      }, 0);
    });
    const at = (t: number) => seen.find(([x]) => x === t)![1];
    // 'done' completes at 4, 'err' errors at 3, 'left' is abandoned at 2.
    expect([0, 1, 2, 3, 4, 5].map((t) => at(t))).toEqual([true, true, true, true, false, false]);
    expect([0, 1, 2, 3, 4, 5].map((t) => at(t + 100))).toEqual([true, true, true, false, false, false]);
    expect([0, 1, 2, 3, 4, 5].map((t) => at(t + 200))).toEqual([true, true, false, false, false, false]);
    expect(inflight.size).toBe(0);
  });

  it('starts the source lazily: nothing happens and nothing is registered before a subscription', () => {
    const inflight = new Map<string, Observable<number>>();
    let calls = 0;
    const obs = defer(() => {
      calls++;
      return [1];
    }).pipe(coalesce({ inflight, key: 'k' }));
    expect(inflight.size).toBe(0);
    expect(calls).toBe(0);
    const got: number[] = [];
    obs.subscribe((v) => got.push(v));
    expect(got).toEqual([1]);
    expect(calls).toBe(1);
    expect(inflight.size).toBe(0);
  });
});

describe('coalesce with flow control (streams)', () => {
  it('a joining request keeps the shared upstream going while the starter is held, and is paced by its own client', () => {
    const inflight = new Map<string, Observable<string>>();
    const upstream = new Subject<string>();
    const starter = new Flow();
    const joiner = new Flow();
    const body = { calls: [] as string[], pause: () => body.calls.push('pause'), resume: () => body.calls.push('resume') };
    starter.attach(body);
    const a: string[] = [];
    const b: string[] = [];
    const subA = upstream.pipe(coalesce({ inflight, key: 'k', flow: starter })).subscribe((v) => a.push(v));
    upstream.next('1');
    const subB = upstream.pipe(coalesce({ inflight, key: 'k', flow: joiner })).subscribe((v) => b.push(v));
    expect(b).toEqual(['1']); // replayed

    starter.pause(); // A's socket is full; B still reads: the upstream is not paused
    upstream.next('2');
    expect(body.calls).toEqual([]);
    expect([a, b]).toEqual([['1'], ['1', '2']]);

    joiner.pause(); // nobody reads: the upstream body is paused
    expect(body.calls).toEqual(['pause']);
    joiner.resume();
    starter.resume();
    expect(a).toEqual(['1', '2']);
    expect(body.calls).toEqual(['pause', 'resume']);

    subB.unsubscribe(); // B left: A alone holds the upstream back again
    starter.pause();
    expect(body.calls).toEqual(['pause', 'resume', 'pause']);
    subA.unsubscribe();
    expect(upstream.observed).toBe(false);
  });
});
