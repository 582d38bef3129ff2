import { asyncScheduler, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { attemptTimeout } from '../../src/operators/timeout.js';
import { Flow } from '../../src/upstream/flow.js';
import { newScheduler } from '../helpers/marbles.js';

const timeoutError = (message: string) =>
  expect.objectContaining({
    name: 'GatewayError',
    code: 'request_timeout',
    status: 408,
    type: 'timeout_error',
    param: 'request_timeout',
    message,
  });

/** The gateway's own idle limit elapsed: the provider went silent (504), not the request's request_timeout. */
const idleError = (message: string) =>
  expect.objectContaining({ name: 'GatewayError', code: 'upstream_timeout', status: 504, type: 'timeout_error', param: null, message });

describe('attemptTimeout', () => {
  it('errors with request_timeout (408, timeout_error) when the first value is late, and unsubscribes the source', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('150ms a|');
      expectObservable(source.pipe(attemptTimeout({ firstMs: 100 }))).toBe('100ms #', undefined, timeoutError('The request timed out after 100 ms.'));
      expectSubscriptions(source.subscriptions).toBe('^ 99ms !');
    });
  });

  it('throws an actual GatewayError instance', () => {
    let err: unknown;
    newScheduler().run(({ cold }) => {
      cold('150ms a|').pipe(attemptTimeout({ firstMs: 100 })).subscribe({ error: (e) => (err = e) });
    });
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).toBody('t')).toEqual({
      error: { message: 'The request timed out after 100 ms.', type: 'timeout_error', code: 'request_timeout', param: 'request_timeout' },
      trace_id: 't',
    });
  });

  it('lets a first value that is on time through, and completes with the source', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('99ms a 50ms b|');
      expectObservable(source.pipe(attemptTimeout({ firstMs: 100 }))).toBe('99ms a 50ms b|');
      expectSubscriptions(source.subscriptions).toBe('^ 150ms !');
    });
  });

  it('does not limit the gaps after the first value when there is no idle limit', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('10ms a 500ms b 1000ms c|');
      expectObservable(source.pipe(attemptTimeout({ firstMs: 100 }))).toBe('10ms a 500ms b 1000ms c|');
    });
  });

  it('applies the idle limit between stream chunks (504 upstream_timeout)', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      // a at 10, b at 31 (20 ms idle: fine), c would come 41 ms after b: the idle limit of 30 elapses at 61.
      const source = cold('10ms a 20ms b 40ms c|');
      expectObservable(source.pipe(attemptTimeout({ firstMs: 100, idleMs: 30 }))).toBe(
        '10ms a 20ms b 29ms #',
        undefined,
        idleError('The stream was idle for more than 30 ms.'),
      );
      expectSubscriptions(source.subscriptions).toBe('^ 60ms !');
    });
  });

  it('uses the first limit (not the idle one) for the first chunk', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // The first chunk after 80 ms is fine under request_timeout 100 even though the idle limit is 30.
      const source = cold('80ms a 29ms b 29ms c|');
      expectObservable(source.pipe(attemptTimeout({ firstMs: 100, idleMs: 30 }))).toBe('80ms a 29ms b 29ms c|');
    });
  });

  it('bounds the first chunk by the idle limit when there is no request_timeout (504 upstream_timeout, not 408)', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('50ms a|');
      expectObservable(source.pipe(attemptTimeout({ idleMs: 30 }))).toBe('30ms #', undefined, idleError('The provider sent no chunk within 30 ms.'));
    });
  });

  it('does not time out a source that completes without a value in time', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('20ms |').pipe(attemptTimeout({ firstMs: 100, idleMs: 30 }))).toBe('20ms |');
    });
  });

  it('passes a source error through unchanged', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const boom = new GatewayError('upstream_unreachable');
      expectObservable(cold('20ms #', undefined, boom).pipe(attemptTimeout({ firstMs: 100, idleMs: 30 }))).toBe('20ms #', undefined, boom);
    });
  });

  it('runs on the scheduler it is given', () => {
    const ts = newScheduler();
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('150ms a|');
      expectObservable(source.pipe(attemptTimeout({ firstMs: 100, scheduler: ts }))).toBe('100ms #', undefined, timeoutError('The request timed out after 100 ms.'));
      expectSubscriptions(source.subscriptions).toBe('^ 99ms !');
    });
  });

  it('is the identity when no limit is set', () => {
    const src = of(1);
    expect(attemptTimeout({})(src)).toBe(src);
  });

  it.each([0, -5, Number.NaN, Number.POSITIVE_INFINITY])('refuses request_timeout %s when built', (ms) => {
    expect(() => attemptTimeout({ firstMs: ms })).toThrow(/request_timeout must be > 0/);
  });
});

describe('attemptTimeout with a flow (the client can hold the stream back)', () => {
  it('does not count time while the flow is paused as idle, and counts again from the resume', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const flow = new Flow();
      // a at 10; the client holds the stream from 20 to 120 (longer than the idle limit of 30); nothing
      // more comes: the idle limit elapses 30 ms after the resume.
      const source = cold('10ms a 500ms b|');
      asyncScheduler.schedule(() => flow.pause(), 20);
      asyncScheduler.schedule(() => flow.resume(), 120);
      expectObservable(source.pipe(attemptTimeout({ firstMs: 100, idleMs: 30, flow }))).toBe(
        '10ms a 139ms #',
        undefined,
        idleError('The stream was idle for more than 30 ms.'),
      );
    });
  });

  it('still bounds the first chunk and the gaps while the flow is not paused', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const flow = new Flow();
      expectObservable(cold('150ms a|').pipe(attemptTimeout({ firstMs: 100, idleMs: 30, flow }))).toBe('100ms #', undefined, timeoutError('The request timed out after 100 ms.'));
      expectObservable(cold('10ms a 20ms b 40ms c|').pipe(attemptTimeout({ firstMs: 100, idleMs: 30, flow }))).toBe(
        '10ms a 20ms b 29ms #',
        undefined,
        idleError('The stream was idle for more than 30 ms.'),
      );
    });
  });
});
