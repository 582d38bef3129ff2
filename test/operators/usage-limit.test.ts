import { lastValueFrom, of, Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { PriceTable } from '../../src/pricing/prices.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { UsageLimits } from '../../src/limits/service.js';
import type { LimitedRequest } from '../../src/limits/types.js';
import { usageLimit } from '../../src/operators/usage-limit.js';
import type { PlanNode } from '../../src/plan/types.js';
import { MemoryPolicyStore } from '../../src/state/memory/policy-store.js';
import { MemoryUsageCounters } from '../../src/state/memory/usage-counters.js';
import type { ReserveItem, ReserveOutcome } from '../../src/state/usage-counters.js';
import { recording } from '../helpers/telemetry.js';

const plan = { kind: 'target', path: 'config', id: 'config', weight: 1, settings: {}, declares: [], target: { provider: 'openai' } } as unknown as PlanNode;
const key = { name: 'team-a', workspace_id: 'ws-a' };
const req = (over: Partial<LimitedRequest> = {}): LimitedRequest => ({
  traceId: 't',
  request: { endpoint: 'chat', body: { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } },
  plan,
  key,
  ...over,
});

async function setup(counters = new MemoryUsageCounters()) {
  const policies = new MemoryPolicyStore();
  const { telemetry, calls } = recording();
  const limits = new UsageLimits({ policies, counters, prices: new PriceTable(), telemetry, logger: { warn() {} }, now: () => Date.UTC(2031, 0, 1), onStoreError: 'closed' });
  return { policies, counters, limits, stage: usageLimit<LimitedRequest>({ limits }), calls };
}

const draft = { name: 'p', type: 'tokens' as const, status: 'active' as const, conditions: [], group_by: [], credit_limit: 20, alert_threshold: null, periodic_reset: null, workspace_id: 'ws-a', organisation_id: null };

describe('usage-limit stage', () => {
  it('is the identity while no policy is active, and for a key outside every policy scope', async () => {
    const { policies, stage } = await setup();
    const src = of(req());
    expect(stage(src)).toBe(src);
    await policies.create(draft);
    const other = req({ key: { name: 'b', workspace_id: 'ws-b' } });
    expect(await lastValueFrom(stage(of(other)))).toBe(other);
    expect(other.limits).toBeUndefined();
  });

  it('reserves the estimate (15 = 5 + max_tokens 10) while some of the limit is left; the ledger releases it when the answer ends without any attempt', async () => {
    const { policies, limits, stage, counters } = await setup();
    const p = await policies.create(draft);
    const r = req();
    await lastValueFrom(stage(of(r)));
    expect(r.limits?.held.map((h) => h.estimate)).toEqual([15]);
    // 15 reserved of 20: 5 are left, so a second is admitted (its 15 need not fit); then none are left
    const r2 = req();
    await lastValueFrom(stage(of(r2)));
    await expect(lastValueFrom(stage(of(req())))).rejects.toMatchObject({ code: 'usage_limit_exceeded', status: 412 });
    limits.end(r);
    limits.end(r2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await counters.usage({ policyId: p.id, type: 'tokens', reset: null }, Date.UTC(2031, 0, 1))).toEqual({});
    expect(await lastValueFrom(stage(of(req())))).toBeDefined();
  });

  it('the 412 says which refused: in-flight reservations fill the rest, or usage reached the limit, with the numbers and no request text', async () => {
    const { policies, limits, stage } = await setup();
    const p = await policies.create({ ...draft, name: 'Edge', credit_limit: 42 });
    const secret = 'the prompt text 7f3a';
    const ask = () => req({ request: { endpoint: 'chat', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: secret }] } } });
    const refusal = async () => (await lastValueFrom(stage(of(ask()))).then(() => undefined, (e: unknown) => e)) as GatewayError;
    // no max_tokens: 1,024 output tokens are estimated, more than the whole limit, and still admitted at 0 used
    const first = ask();
    await lastValueFrom(stage(of(first)));
    const estimate = first.limits!.held[0]!.estimate;
    expect(estimate).toBeGreaterThan(1024);
    const busy = await refusal();
    expect(busy).toMatchObject({ status: 412, code: 'usage_limit_exceeded' });
    expect(busy.message).toBe(
      `Usage limit "Edge" (policy ${p.id}) has no room left: in-flight reservations fill the rest (used 0 + reserved ${estimate} of 42 tokens in all); requests are admitted again as those in flight end.`,
    );
    expect(busy.extra?.usage_limit).toMatchObject({ used: 0, reserved: estimate, credit_limit: 42, reason: 'in_flight' });
    // settled with 50 used: the limit is reached
    first.spent = [{ meta: { provider: 'openai', target: 'config', retries: 0 }, usage: { prompt_tokens: 10, completion_tokens: 40, total_tokens: 50 } }];
    limits.end(first);
    await new Promise((resolve) => setImmediate(resolve));
    const reached = await refusal();
    expect(reached.message).toBe(`Usage limit "Edge" (policy ${p.id}) is reached: used 50 of 42 tokens in all (in-flight reservations 0).`);
    expect(reached.extra?.usage_limit).toMatchObject({ used: 50, reserved: 0, credit_limit: 42, reason: 'reached', resets_at: null });
    for (const e of [busy, reached]) expect(JSON.stringify({ m: e.message, x: e.extra })).not.toContain(secret);
  });

  it('a client that leaves while the reservation is made: the reservation is given back', async () => {
    let resolve!: (v: ReserveOutcome) => void;
    const counters = new MemoryUsageCounters();
    const held: Promise<ReserveOutcome>[] = [];
    const slow = Object.assign(Object.create(counters) as MemoryUsageCounters, {
      reserve: (items: readonly ReserveItem[], now: number) => {
        const real = counters.reserve(items, now);
        held.push(real);
        return new Promise<ReserveOutcome>((r) => (resolve = r)).then(() => real);
      },
    });
    const { policies, stage } = await setup(slow);
    await policies.create(draft);
    const r = req();
    const source = new Subject<LimitedRequest>();
    const sub = stage(source as Observable<LimitedRequest>).subscribe();
    source.next(r);
    sub.unsubscribe();
    resolve({ ok: false, refused: 0, used: 0, reserved: 0, periodEnd: 0 }); // (the wrapper answers the real outcome)
    await held[0];
    await new Promise((x) => setImmediate(x));
    expect(r.limits?.done).toBe(true);
    // the whole limit is free again
    const out = await counters.reserve([{ policyId: (policies.active()[0]!).id, type: 'tokens', reset: null, group: '', estimate: 20, limit: 20, alertAt: null }], Date.UTC(2031, 0, 1));
    expect(out.ok).toBe(true);
  });

  it('fails closed with 503 when the counters throw, and counts it', async () => {
    const counters = Object.assign(new MemoryUsageCounters(), { reserve: () => Promise.reject(new Error('ECONNREFUSED')) });
    const { policies, stage, calls } = await setup(counters);
    await policies.create(draft);
    const e = await lastValueFrom(stage(of(req()))).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GatewayError);
    expect(e).toMatchObject({ code: 'usage_limits_unavailable', status: 503 });
    expect(calls).toContainEqual(['limitStoreError', 'refused']);
  });
});
