import { defer } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { DEFAULT_RETRY_CODES, retryDelayMs, retryWithBackoff, type RetryOptions } from '../../src/operators/retry.js';
import { newScheduler, upstreamError as upstream } from '../helpers/marbles.js';

/** Options with no jitter (random 0: delay = base * 2^(n-1)) and a generous budget. */
function opts(scheduler: TestScheduler, o: Partial<RetryOptions> & { attempts: number }): RetryOptions {
  return { budgetLeftMs: () => 1_000_000, now: () => scheduler.now(), random: () => 0, scheduler, ...o };
}

describe('retryWithBackoff', () => {
  it.each(DEFAULT_RETRY_CODES)('retries %i (a default code) `attempts` times, resubscribing after 500 ms, then 1000 ms, then 2000 ms', (status) => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(status);
      const source = cold('-#', undefined, err);
      // errors at 1; +500 → resubscribe at 501, errors at 502; +1000 → 1502, errors at 1503; +2000 → 3503, errors at 3504.
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 3 })))).toBe('3504ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe([
        '^!',
        '501ms ^!',
        '1502ms ^!',
        '3503ms ^!',
      ]);
    });
  });

  it('succeeds on a later attempt and completes with its values', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const failing = cold('-#', undefined, upstream(503));
      const ok = cold('--a|');
      const attempts = [failing, ok];
      let n = 0;
      const composed = defer(() => attempts[n++]!);
      expectObservable(composed.pipe(retryWithBackoff(opts(s, { attempts: 2 })))).toBe('503ms a|');
      expectSubscriptions(failing.subscriptions).toBe('^!');
      expectSubscriptions(ok.subscriptions).toBe('501ms ^--!');
    });
  });

  it('caps the backoff at maxDelayMs', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(500);
      const source = cold('-#', undefined, err);
      // delays 500, 1000, 1500 (cap; 2000 uncapped), 1500 (cap; 4000 uncapped)
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 4, maxDelayMs: 1500 })))).toBe('4505ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe([
        '^!',
        '501ms ^!',
        '1502ms ^!',
        '3003ms ^!',
        '4504ms ^!',
      ]);
    });
  });

  it('uses baseDelayMs and takes up to 25% jitter off the backoff', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(502);
      const source = cold('-#', undefined, err);
      // base 100, random 1 → 75 ms, then 150 ms
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 2, baseDelayMs: 100, random: () => 1 })))).toBe('228ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe([
        '^!',
        '76ms ^!',
        '227ms ^!',
      ]);
    });
  });

  it('does not retry a status that is not in the default codes', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(400);
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 3 })))).toBe('-#', undefined, err);
      expectSubscriptions(source.subscriptions).toBe('^!');
    });
  });

  it('retries only the custom on_status_codes when given', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const e400 = upstream(400);
      const e503 = upstream(503);
      const s400 = cold('-#', undefined, e400);
      const s503 = cold('-#', undefined, e503);
      const op = () => retryWithBackoff(opts(s, { attempts: 1, onStatusCodes: [400] }));
      expectObservable(s400.pipe(op())).toBe('502ms #', undefined, e400);
      expectSubscriptions(s400.subscriptions).toBe(['^!', '501ms ^!']);
      // 503 is a default code but not in the custom list
      expectObservable(s503.pipe(op())).toBe('-#', undefined, e503);
      expectSubscriptions(s503.subscriptions).toBe('^!');
    });
  });

  it('treats an empty on_status_codes as the defaults', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const e429 = upstream(429);
      const e400 = upstream(400);
      const s429 = cold('-#', undefined, e429);
      const s400 = cold('-#', undefined, e400);
      expectObservable(s429.pipe(retryWithBackoff(opts(s, { attempts: 1, onStatusCodes: [] })))).toBe('502ms #', undefined, e429);
      expectSubscriptions(s429.subscriptions).toBe(['^!', '501ms ^!']);
      expectObservable(s400.pipe(retryWithBackoff(opts(s, { attempts: 1, onStatusCodes: [] })))).toBe('-#', undefined, e400);
      expectSubscriptions(s400.subscriptions).toBe('^!');
    });
  });

  it('retries transport errors whose status is a retry code (upstream_unreachable is 502)', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = new GatewayError('upstream_unreachable');
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 1 })))).toBe('502ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe(['^!', '501ms ^!']);
    });
  });

  it('retries upstream_timeout like a 504, and not when 504 is not in on_status_codes', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = new GatewayError('upstream_timeout');
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 1 })))).toBe('502ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe(['^!', '501ms ^!']);
      const narrowed = cold('-#', undefined, err);
      expectObservable(narrowed.pipe(retryWithBackoff(opts(s, { attempts: 1, onStatusCodes: [429] })))).toBe('-#', undefined, err);
      expectSubscriptions(narrowed.subscriptions).toBe('^!');
    });
  });

  it('never retries after a value was emitted (the stream started)', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = new GatewayError('stream_interrupted');
      const source = cold('-a-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 3 })))).toBe('-a-#', undefined, err);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('never retries circuit_open (503, but a gateway decision)', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = new GatewayError('circuit_open', undefined, { headers: { 'retry-after': '1' } });
      expect(err.status).toBe(503);
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 3, useRetryAfterHeaders: true })))).toBe('-#', undefined, err);
      expectSubscriptions(source.subscriptions).toBe('^!');
    });
  });

  it('never retries an error that is not a GatewayError', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = new Error('bug');
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 3 })))).toBe('-#', undefined, err);
      expectSubscriptions(source.subscriptions).toBe('^!');
    });
  });

  it('honours retry-after-ms when useRetryAfterHeaders is true', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(429, { 'retry-after-ms': '250', 'retry-after': '9' });
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 2, useRetryAfterHeaders: true })))).toBe('503ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe([
        '^!',
        '251ms ^!',
        '502ms ^!',
      ]);
    });
  });

  it('honours retry-after in seconds when useRetryAfterHeaders is true', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(503, { 'retry-after': '3' });
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 1, useRetryAfterHeaders: true })))).toBe('3002ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe(['^!', '3001ms ^!']);
    });
  });

  it('honours a retry-after HTTP date, relative to now', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      // The virtual clock starts at the epoch: the date is 3 s after it; the error comes at 1 ms → wait 2999 ms.
      const err = upstream(503, { 'retry-after': 'Thu, 01 Jan 1970 00:00:03 GMT' });
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 1, useRetryAfterHeaders: true })))).toBe('3001ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe(['^!', '3000ms ^!']);
    });
  });

  it('ignores retry-after headers when useRetryAfterHeaders is false (backoff instead)', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(429, { 'retry-after-ms': '250', 'retry-after': '9' });
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 1, useRetryAfterHeaders: false })))).toBe('502ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe(['^!', '501ms ^!']);
    });
  });

  it('falls back to the backoff when the retry-after header is unreadable', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(429, { 'retry-after': 'soon' });
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 1, useRetryAfterHeaders: true })))).toBe('502ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe(['^!', '501ms ^!']);
    });
  });

  it('does not retry when the wait would exceed the time budget left', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(503);
      const source = cold('-#', undefined, err);
      // Budget of 1200 ms from t=0: the first wait (500) fits; at 502 only 698 ms are left, the second wait (1000) does not.
      const budgetLeftMs = () => 1200 - s.now();
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 3, budgetLeftMs })))).toBe('502ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe(['^!', '501ms ^!']);
    });
  });

  it('does not honour a retry-after that would exceed the budget', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(429, { 'retry-after': '60' });
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 3, useRetryAfterHeaders: true, budgetLeftMs: () => 30_000 })))).toBe(
        '-#',
        undefined,
        err,
      );
      expectSubscriptions(source.subscriptions).toBe('^!');
    });
  });

  it('reports each retry to onRetry with its number, its wait and the error', () => {
    const s = newScheduler();
    const calls: [number, number, unknown][] = [];
    const err = upstream(503);
    s.run(({ cold, expectObservable }) => {
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 2, onRetry: (n, ms, e) => calls.push([n, ms, e]) })))).toBe(
        '1503ms #',
        undefined,
        err,
      );
    });
    expect(calls).toEqual([
      [1, 500, err],
      [2, 1000, err],
    ]);
  });

  it('with attempts 0 passes the error straight through', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(503);
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff(opts(s, { attempts: 0 })))).toBe('-#', undefined, err);
      expectSubscriptions(source.subscriptions).toBe('^!');
    });
  });

  it('works on the default (patched) scheduler in run mode when none is passed', () => {
    const s = newScheduler();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const err = upstream(503);
      const source = cold('-#', undefined, err);
      expectObservable(source.pipe(retryWithBackoff({ ...opts(s, { attempts: 1 }), scheduler: undefined }))).toBe('502ms #', undefined, err);
      expectSubscriptions(source.subscriptions).toBe(['^!', '501ms ^!']);
    });
  });

  it.each([-1, 1.5, 11, Number.NaN])('throws when built with attempts %s', (attempts) => {
    expect(() => retryWithBackoff({ attempts, budgetLeftMs: () => 1000, now: () => 0 })).toThrow(/retry\.attempts must be an integer from 0 to 10/);
  });

  it('accepts attempts 10', () => {
    expect(() => retryWithBackoff({ attempts: 10, budgetLeftMs: () => 1000, now: () => 0 })).not.toThrow();
  });
});

describe('retryDelayMs', () => {
  const base: RetryOptions = { attempts: 3, budgetLeftMs: () => 1e9, now: () => 0, random: () => 0 };
  it.each([
    [1, 500],
    [2, 1000],
    [3, 2000],
    [4, 4000],
    [5, 8000],
    [6, 8000],
  ])('retry %i waits %i ms with no jitter and the default base and cap', (n, ms) => {
    expect(retryDelayMs(upstream(503), n, base)).toBe(ms);
  });

  it('jitter takes at most 25% off', () => {
    expect(retryDelayMs(upstream(503), 1, { ...base, random: () => 0.5 })).toBe(437.5);
  });
});
