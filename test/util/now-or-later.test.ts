import { of, Subject, throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { andThen, inOrder, isLater, later } from '../../src/util/now-or-later.js';

/** What `obs` emitted, threw and whether it completed, as it happens. */
function watch<T>(obs: ReturnType<typeof later<T>>) {
  const seen: { values: T[]; error?: unknown; completed: boolean } = { values: [], completed: false };
  const sub = obs.subscribe({ next: (v) => seen.values.push(v), error: (e: unknown) => (seen.error = e), complete: () => (seen.completed = true) });
  return { seen, sub };
}

describe('andThen', () => {
  it('applies at once to a value at hand, and when it comes to an Observable', () => {
    expect(andThen(2, (n) => n + 1)).toBe(3);
    const later3 = andThen(of(2), (n) => n + 1);
    expect(isLater(later3)).toBe(true);
    expect(watch(later(later3)).seen.values).toEqual([3]);
  });
});

describe('inOrder', () => {
  it('passes what `next` gives at once during the subscription; undefined passes nothing; `end` comes before completion', () => {
    const { seen } = watch(of(1, 2, 3).pipe(inOrder((n) => (n === 2 ? undefined : n * 10), () => of(99))));
    expect(seen).toEqual({ values: [10, 30, 99], completed: true });
  });

  it('what waits holds back the values and the end behind it, in order', () => {
    const source = new Subject<number>();
    const gate = new Subject<number>();
    const { seen } = watch(source.pipe(inOrder((n) => (n === 1 ? gate : n))));
    source.next(0);
    source.next(1);
    source.next(2);
    source.complete();
    expect(seen).toEqual({ values: [0], completed: false });
    gate.next(100);
    expect(seen.values).toEqual([0, 100]);
    gate.complete();
    expect(seen).toEqual({ values: [0, 100, 2], completed: true });
  });

  it("a throw of `next` or an error of what it gave is the result's error", () => {
    const thrown = watch(of(1).pipe(inOrder(() => {
      throw new Error('denied');
    }))).seen;
    expect([thrown.values, (thrown.error as Error).message]).toEqual([[], 'denied']);
    const failed = watch(of(1, 2).pipe(inOrder((n) => (n === 1 ? throwError(() => new Error('later')) : n)))).seen;
    expect([failed.values, (failed.error as Error).message, failed.completed]).toEqual([[], 'later', false]);
  });

  it('unsubscribed, it lets go of the source and of what it waits for', () => {
    const source = new Subject<number>();
    const gate = new Subject<number>();
    const { sub } = watch(source.pipe(inOrder(() => gate)));
    source.next(1);
    expect([source.observed, gate.observed]).toEqual([true, true]);
    sub.unsubscribe();
    expect([source.observed, gate.observed]).toEqual([false, false]);
  });
});
