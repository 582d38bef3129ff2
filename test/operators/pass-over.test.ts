/**
 * Fallback and loadbalance with a pass-over rule: a child whose error says it cannot serve (it was
 * never asked) is skipped whatever the status rule says; a real failure of another child is the
 * answer before it; only when every child was passed over is `none` of their errors the answer.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { noTargetCanServe, refusedBy, TargetCannotServe } from '../../src/errors/cannot-serve.js';
import { fallback, type PassOver } from '../../src/operators/fallback.js';
import { loadbalance, type Weighted } from '../../src/operators/loadbalance.js';
import { newScheduler, upstreamError as upstream } from '../helpers/marbles.js';
import { Observable } from 'rxjs';

const PASS: PassOver = {
  test: (e) => e instanceof TargetCannotServe,
  none: (errs) => noTargetCanServe(errs as TargetCannotServe[]),
};
const never = () => false;
const lazy = <T>(o: Observable<T>) => () => o;
const refusal = (target: string, param = 'n') =>
  refusedBy(new GatewayError('invalid_request_body', `cannot ${param}`, { param }), 'anthropic', target) as TargetCannotServe;

describe('fallback with pass-over', () => {
  it('skips a child that cannot serve even when shouldFallBack says no', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('#', undefined, refusal('t0'));
      const b = cold('-b|');
      expectObservable(fallback({ children: [lazy(a), lazy(b)], shouldFallBack: never, passOver: PASS })()).toBe('-b|');
      expectSubscriptions(b.subscriptions).toBe('^-!');
    });
  });

  it('a real failure before a child that cannot serve is the answer', () => {
    const real = upstream(503);
    newScheduler().run(({ cold, expectObservable }) => {
      const a = cold('-#', undefined, real);
      const b = cold('#', undefined, refusal('t1'));
      expectObservable(fallback({ children: [lazy(a), lazy(b)], shouldFallBack: () => true, passOver: PASS })()).toBe('-#', undefined, real);
    });
  });

  it('every child passed over: one 400 naming each target and the fields', () => {
    const errors: unknown[] = [];
    fallback({ children: [lazy(cold0('t0', 'n')), lazy(cold0('t1', 'logprobs'))], shouldFallBack: never, passOver: PASS })().subscribe({ error: (e) => errors.push(e) });
    const e = errors[0] as TargetCannotServe;
    expect(e).toBeInstanceOf(TargetCannotServe);
    expect(e.status).toBe(400);
    expect(e.param).toBe('n');
    expect(e.message).toBe('No target can serve this request (n, logprobs): t0 (anthropic): cannot n; t1 (anthropic): cannot logprobs');
    expect(e.refusingTarget).toBeUndefined();
  });

  it('without pass-over a refusal is an error like any other (shouldFallBack decides)', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const r = refusal('t0');
      expectObservable(fallback({ children: [lazy(cold('#', undefined, r)), lazy(cold('-b|'))], shouldFallBack: never })()).toBe('#', undefined, r);
    });
  });
});

/** A child that refuses at once, as a translator does. */
function cold0(target: string, param: string): Observable<never> {
  return new Observable<never>((s) => s.error(refusal(target, param)));
}

describe('loadbalance with pass-over', () => {
  const child = <T>(run: Weighted<T>['run'], weight = 1, eligible = () => true): Weighted<T> => ({ weight, eligible, run });
  const noneEligible = () => new GatewayError('circuit_open');

  it('a pick that cannot serve is set aside and another is picked; the refusing child is asked once', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('#', undefined, refusal('t0'));
      const b = cold('-b|');
      expectObservable(loadbalance({ children: [child(() => a), child(() => b)], random: () => 0, noneEligible, passOver: PASS })()).toBe('-b|');
      expectSubscriptions(a.subscriptions).toBe('(^!)');
      expectSubscriptions(b.subscriptions).toBe('^-!');
    });
  });

  it('a real failure of the pick is the answer (no re-pick)', () => {
    const real = upstream(500);
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-#', undefined, real);
      const b = cold('-b|');
      expectObservable(loadbalance({ children: [child(() => a), child(() => b)], random: () => 0, noneEligible, passOver: PASS })()).toBe('-#', undefined, real);
      expectSubscriptions(b.subscriptions).toBe([]);
    });
  });

  it('every weighted child refuses → none of their errors; a weight-0 child is never tried', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const r0 = refusal('t0');
      const r1 = refusal('t1');
      const z = cold('-z|');
      const lb = loadbalance({ children: [child(() => cold('#', undefined, r0)), child(() => cold('#', undefined, r1)), child(() => z, 0)], random: () => 0, noneEligible, passOver: PASS })();
      expectObservable(lb).toBe('#', undefined, noTargetCanServe([r0, r1]));
      expectSubscriptions(z.subscriptions).toBe([]);
    });
  });

  it('the rest refused and one is left out only by its open circuit → noneEligible (it may serve later)', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const lb = loadbalance({ children: [child(() => cold('#', undefined, refusal('t0'))), child(() => cold('-b|'), 1, () => false)], random: () => 0, noneEligible, passOver: PASS })();
      expectObservable(lb).toBe('#', undefined, noneEligible());
    });
  });
});

describe('refusedBy', () => {
  it('wraps a translator refusal (invalid_request_body, unsupported_endpoint), keeping code, status, param and message', () => {
    const e = refusedBy(new GatewayError('unsupported_endpoint', 'no embeddings'), 'anthropic', 'config.targets[0]') as TargetCannotServe;
    expect(e).toBeInstanceOf(TargetCannotServe);
    expect([e.code, e.status, e.message, e.param]).toEqual(['unsupported_endpoint', 400, 'no embeddings', null]);
    expect(e.refusingTarget).toEqual({ provider: 'anthropic', target: 'config.targets[0]', retries: 0 });
  });

  it('leaves a config error or any other error as it is', () => {
    const cfg = new GatewayError('invalid_config', 'needs cloud_c_region');
    expect(refusedBy(cfg, 'vertex-ai', 'config')).toBe(cfg);
    const other = new Error('boom');
    expect(refusedBy(other, 'openai', 'config')).toBe(other);
  });
});
