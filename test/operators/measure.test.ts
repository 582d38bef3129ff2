import { Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { measure, type AttemptAccount, type UpstreamClock } from '../../src/operators/measure.js';
import type { TargetLabels } from '../../src/metrics/telemetry.js';
import type { AnswerMeta, GatewayEvent } from '../../src/upstream/events.js';
import { newScheduler } from '../helpers/marbles.js';
import { recording } from '../helpers/telemetry.js';

const labels: TargetLabels = { target: 'config.targets[0]', provider: 'openai', endpoint: 'chat' };
const meta: AnswerMeta = { provider: 'openai', target: 'config.targets[0]', retries: 0 };
const usage = { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 };
const e503 = new GatewayError('upstream_error', 'down', { status: 503 });

/** A request's upstream clock and attempt account, as a fresh request starts them. */
const ctxOf = (): UpstreamClock & AttemptAccount => ({ upstreamActive: 0, upstreamSince: 0, upstreamMs: 0 });

function setup() {
  const s = newScheduler();
  const now = () => s.now();
  const { telemetry, calls, at } = recording(now);
  const ctx = ctxOf();
  const measured = (src: Observable<GatewayEvent>) => src.pipe(measure({ labels, telemetry, now, clock: ctx }));
  return { s, calls, at, ctx, measured };
}

describe('measure', () => {
  it("keeps the attempt's latest usage for the ledger and drops a price made from an earlier one", () => {
    const ctx = ctxOf();
    const src = new Subject<GatewayEvent>();
    src.pipe(measure({ labels, telemetry: recording().telemetry, now: () => 0, clock: ctx, meta, account: ctx })).subscribe();
    src.next({ type: 'stream-start', meta });
    src.next({ type: 'chunk', data: '{}', usage });
    expect(ctx.spent).toEqual([{ meta, usage }]);
    ctx.spent![0]!.cost = 0.5; // what the ledger priced the first usage at
    const later = { ...usage, completion_tokens: 9, total_tokens: 12 };
    src.next({ type: 'chunk', data: '{}', usage: later });
    expect(ctx.spent).toHaveLength(1);
    expect(ctx.spent![0]!.usage).toBe(later);
    expect(ctx.spent![0]!.cost).toBeUndefined();
  });

  it('a JSON success: targetStarted, tokens from usage, targetFinished(success, status, seconds)', () => {
    const { s, calls, at, ctx, measured } = setup();
    const json: GatewayEvent = { type: 'json', status: 201, body: {}, meta, usage };
    s.run(({ cold, expectObservable }) => {
      const src = cold<GatewayEvent>('100ms j 49ms |', { j: json });
      expectObservable(measured(src)).toBe('100ms j 49ms |', { j: json });
    });
    expect(calls).toEqual([
      ['targetStarted', labels],
      ['tokens', labels, usage],
      ['targetFinished', labels, 'success', 201, 0.15],
    ]);
    expect(at).toEqual([0, 100, 150]);
    expect(ctx.upstreamMs).toBe(150);
    expect(ctx.upstreamActive).toBe(0);
  });

  it('a JSON answer without usage records no tokens and no time to first token', () => {
    const { s, calls, measured } = setup();
    s.run(({ cold, expectObservable }) => {
      const j: GatewayEvent = { type: 'json', status: 200, body: {}, meta };
      expectObservable(measured(cold<GatewayEvent>('10ms j|', { j }))).toBe('10ms j|', { j });
    });
    expect(calls.map((c) => c[0])).toEqual(['targetStarted', 'targetFinished']);
    expect(calls[1]).toEqual(['targetFinished', labels, 'success', 200, 0.011]);
  });

  it('a stream: time to first token at stream-start, tokens from chunk usage, success 200 at the end', () => {
    const { s, calls, at, measured } = setup();
    const values: Record<string, GatewayEvent> = {
      s: { type: 'stream-start', meta },
      a: { type: 'chunk', data: '{"x":1}' },
      u: { type: 'chunk', data: '{"x":2}', usage },
    };
    s.run(({ cold, expectObservable }) => {
      const src = cold<GatewayEvent>('40ms s 9ms a 49ms u 99ms |', values);
      expectObservable(measured(src)).toBe('40ms s 9ms a 49ms u 99ms |', values);
    });
    expect(calls).toEqual([
      ['targetStarted', labels],
      ['timeToFirstToken', labels, 0.04],
      ['tokens', labels, usage],
      ['targetFinished', labels, 'success', 200, 0.2],
    ]);
    expect(at).toEqual([0, 40, 100, 200]);
  });

  it('measures from its own subscription, not from the start of the clock', () => {
    const { s, calls, at, measured } = setup();
    s.run(({ cold, expectObservable }) => {
      const src = cold<GatewayEvent>('30ms s 69ms |', { s: { type: 'stream-start', meta } });
      expectObservable(measured(src), '500ms ^').toBe('530ms s 69ms |', { s: { type: 'stream-start', meta } });
    });
    expect(calls[1]).toEqual(['timeToFirstToken', labels, 0.03]);
    expect(calls[2]).toEqual(['targetFinished', labels, 'success', 200, 0.1]);
    expect(at[0]).toBe(500);
  });

  it.each<[string, unknown, string, number]>([
    ['an upstream error keeps its status', new GatewayError('upstream_error', 'x', { status: 429 }), 'error', 429],
    ['an upstream 503', new GatewayError('upstream_error', 'x', { status: 503 }), 'error', 503],
    ['an unreachable upstream has status 0', new GatewayError('upstream_unreachable'), 'error', 0],
    ['an invalid response', new GatewayError('upstream_invalid_response'), 'error', 502],
    ['request_timeout is a timeout (408)', new GatewayError('request_timeout'), 'timeout', 408],
    ['upstream_timeout is a timeout (504)', new GatewayError('upstream_timeout'), 'timeout', 504],
    ['circuit_open', new GatewayError('circuit_open'), 'circuit_open', 503],
    ['a plain Error has status 0', new Error('boom'), 'error', 0],
  ])('%s → %s %i', (_name, err, outcome, status) => {
    const { s, calls, ctx, measured } = setup();
    s.run(({ cold, expectObservable }) => {
      expectObservable(measured(cold<GatewayEvent>('20ms #', undefined, err))).toBe('20ms #', undefined, err);
    });
    expect(calls).toEqual([
      ['targetStarted', labels],
      ['targetFinished', labels, outcome, status, 0.02],
    ]);
    expect(ctx.upstreamMs).toBe(20);
  });

  it('an error after a stream started records the error outcome, once', () => {
    const { s, calls, measured } = setup();
    const err = new GatewayError('stream_interrupted');
    s.run(({ cold, expectObservable }) => {
      const values: Record<string, GatewayEvent> = { s: { type: 'stream-start', meta }, a: { type: 'chunk', data: 'x' } };
      expectObservable(measured(cold<GatewayEvent>('5ms s a 3ms #', values, err))).toBe('5ms s a 3ms #', values, err);
    });
    expect(calls.filter((c) => c[0] === 'targetFinished')).toEqual([['targetFinished', labels, 'error', 502, 0.01]]);
  });

  it('unsubscribing before the end records cancelled (status 0) at that moment', () => {
    const { s, calls, at, ctx, measured } = setup();
    s.run(({ cold, expectObservable, expectSubscriptions }) => {
      const src = cold<GatewayEvent>('100ms s|', { s: { type: 'stream-start', meta } });
      expectObservable(measured(src), '^ 59ms !').toBe('');
      expectSubscriptions(src.subscriptions).toBe('^ 59ms !');
    });
    expect(calls).toEqual([
      ['targetStarted', labels],
      ['targetFinished', labels, 'cancelled', 0, 0.06],
    ]);
    expect(at).toEqual([0, 60]);
    expect(ctx.upstreamMs).toBe(60);
    expect(ctx.upstreamActive).toBe(0);
  });

  it('measures each subscription (retry) separately', () => {
    const { s, calls, ctx, measured } = setup();
    s.run(({ cold, expectObservable }) => {
      const m = measured(cold<GatewayEvent>('10ms #', undefined, new GatewayError('upstream_error', 'x', { status: 500 })));
      expectObservable(m).toBe('10ms #', undefined, expect.anything());
      expectObservable(m, '50ms ^').toBe('60ms #', undefined, expect.anything());
    });
    expect(calls.filter((c) => c[0] === 'targetStarted')).toHaveLength(2);
    expect(calls.filter((c) => c[0] === 'targetFinished')).toEqual([
      ['targetFinished', labels, 'error', 500, 0.01],
      ['targetFinished', labels, 'error', 500, 0.01],
    ]);
    expect(ctx.upstreamMs).toBe(20);
  });

  it('ctx.upstreamMs counts the union of overlapping attempts (the overlap once)', () => {
    const { s, ctx, measured } = setup();
    const j: GatewayEvent = { type: 'json', status: 200, body: {}, meta };
    let midway: [number, number] | undefined;
    s.run(({ cold, expectObservable }) => {
      // A: 0–100, B: 50–150 (overlap 50–100) → 150; C: 300–320, alone → +20
      expectObservable(measured(cold<GatewayEvent>('99ms j|', { j }))).toBe('99ms j|', { j });
      expectObservable(measured(cold<GatewayEvent>('99ms j|', { j })), '50ms ^').toBe('149ms j|', { j });
      cold('75ms x').subscribe(() => (midway = [ctx.upstreamActive, ctx.upstreamMs]));
      expectObservable(measured(cold<GatewayEvent>('19ms j|', { j })), '300ms ^').toBe('319ms j|', { j });
    });
    expect(midway).toEqual([2, 0]);
    expect(ctx.upstreamMs).toBe(170);
    expect(ctx.upstreamActive).toBe(0);
  });

  it('a measured attempt nested inside another counts once', () => {
    const { s, ctx, measured } = setup();
    s.run(({ cold, expectObservable }) => {
      const j: GatewayEvent = { type: 'json', status: 200, body: {}, meta };
      expectObservable(measured(cold<GatewayEvent>('199ms j|', { j }))).toBe('199ms j|', { j });
      expectObservable(measured(cold<GatewayEvent>('9ms #', undefined, new GatewayError('upstream_unreachable'))), '20ms ^').toBe(
        '29ms #',
        undefined,
        expect.anything(),
      );
    });
    expect(ctx.upstreamMs).toBe(200);
  });

  it('a telemetry that throws never fails, hangs or crashes the request: events and errors pass through', () => {
    const s = newScheduler();
    const now = () => s.now();
    const boom = (): void => {
      throw new Error('metrics backend broken');
    };
    const telemetry = { ...recording(now).telemetry, targetStarted: boom, targetFinished: boom, timeToFirstToken: boom, tokens: boom };
    const ctx = ctxOf();
    const json: GatewayEvent = { type: 'json', status: 200, body: {}, meta, usage };
    s.run(({ cold, expectObservable }) => {
      expectObservable(cold<GatewayEvent>('10ms j |', { j: json }).pipe(measure({ labels, telemetry, now, clock: ctx }))).toBe('10ms j |', { j: json });
      expectObservable(cold<GatewayEvent>('10ms #', undefined, e503).pipe(measure({ labels, telemetry, now, clock: ctx }))).toBe('10ms #', undefined, e503);
    });
  });
});

describe('measure: exemplars and spans', () => {
  it("passes the request's trace id with the attempt's duration and first-token time, and tells the attempt's span what the stream said", () => {
    const { telemetry, calls } = recording();
    const ctx = ctxOf();
    const notes: unknown[][] = [];
    const ends: unknown[][] = [];
    const src = new Subject<GatewayEvent>();
    const startSpan = () => ({ note: (...a: unknown[]) => void notes.push(a), end: (...a: unknown[]) => void ends.push(a) });
    src.pipe(measure({ labels, telemetry, now: () => 0, clock: ctx, traceId: 'tr-1', startSpan })).subscribe({ error: () => undefined });
    src.next({ type: 'stream-start', meta });
    src.next({ type: 'chunk', data: '{"model":"m-1","choices":[{"delta":{},"finish_reason":"length"}]}' });
    src.next({ type: 'chunk', data: '{"choices":[]}', usage });
    src.error(e503);
    expect(calls.find((c) => c[0] === 'timeToFirstToken')).toEqual(['timeToFirstToken', labels, 0, 'tr-1']);
    expect(calls.find((c) => c[0] === 'targetFinished')).toEqual(['targetFinished', labels, 'error', 503, 0, 'tr-1']);
    expect(notes).toEqual([
      [{ model: 'm-1', finishReasons: ['length'] }, undefined],
      [undefined, usage],
    ]);
    expect(ends).toEqual([['error', 503, 'upstream_error']]);
  });
});
