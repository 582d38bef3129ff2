import { asyncScheduler, from } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { paced } from '../../src/operators/paced.js';
import { Flow } from '../../src/upstream/flow.js';
import { newScheduler } from '../helpers/marbles.js';


describe('paced', () => {
  it('holds values (and the end) while the client is held, then delivers them in order', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const flow = new Flow();
      asyncScheduler.schedule(() => flow.pause(), 3);
      asyncScheduler.schedule(() => flow.resume(), 10);
      expectObservable(cold('-a-b-c-d|').pipe(paced(flow))).toBe('-a--------(bcd|)');
    });
  });

  it('errors only after the values that came before the error', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const flow = new Flow();
      flow.pause();
      asyncScheduler.schedule(() => flow.resume(), 5);
      expectObservable(cold('-a-#').pipe(paced(flow))).toBe('-----(a#)');
    });
  });

  it('stops a synchronous replay as soon as the client is held, and goes on when it resumes', () => {
    const flow = new Flow();
    const got: number[] = [];
    let done = false;
    from([1, 2, 3, 4, 5])
      .pipe(paced(flow))
      .subscribe({
        next: (v) => {
          got.push(v);
          if (v === 2) flow.pause(); // the socket filled up
        },
        complete: () => (done = true),
      });
    expect(got).toEqual([1, 2]);
    expect(done).toBe(false);
    flow.resume();
    expect(got).toEqual([1, 2, 3, 4, 5]);
    expect(done).toBe(true);
  });

  it('is the identity without a flow', () => {
    const src = from([1]);
    expect(paced(undefined)(src)).toBe(src);
  });
});
