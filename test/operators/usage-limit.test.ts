import { lastValueFrom, of, Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { PriceTable } from '../../src/config/prices.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { UsageLimits, type LimitedRequest } from '../../src/operators/usage-limit.js';
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
  return { policies, counters, limits, calls };
}

const draft = { name: 'p', type: 'tokens' as const, status: 'active' as const, conditions: [], group_by: [], credit_limit: 20, alert_threshold: null, periodic_reset: null, workspace_id: 'ws-a', organisation_id: null };

describe('usage-limit stage', () => {
  it('is the identity while no policy is active, and for a key outside every policy scope', async () => {
    const { policies, limits } = await setup();
    const src = of(req());
    expect(limits.stage(src)).toBe(src);
    await policies.create(draft);
    const other = req({ key: { name: 'b', workspace_id: 'ws-b' } });
    expect(await lastValueFrom(limits.stage(of(other)))).toBe(other);
    expect(other.limits).toBeUndefined();
  });

  it('reserves the estimate (15 = 5 + max_tokens 10); the ledger releases it when the answer ends without any attempt', async () => {
    const { policies, limits, counters } = await setup();
    const p = await policies.create(draft);
    const r = req();
    await lastValueFrom(limits.stage(of(r)));
    expect(r.limits?.held.map((h) => h.estimate)).toEqual([15]);
    // 15 reserved of 20: a second one does not fit
    await expect(lastValueFrom(limits.stage(of(req())))).rejects.toMatchObject({ code: 'usage_limit_exceeded', status: 412 });
    limits.end(r);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await counters.usage({ policyId: p.id, type: 'tokens', reset: null }, Date.UTC(2031, 0, 1))).toEqual({});
    expect(await lastValueFrom(limits.stage(of(req())))).toBeDefined();
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
    const { policies, limits } = await setup(slow);
    await policies.create(draft);
    const r = req();
    const source = new Subject<LimitedRequest>();
    const sub = (limits.stage(source as Observable<LimitedRequest>) as Observable<LimitedRequest>).subscribe();
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
    const { policies, limits, calls } = await setup(counters);
    await policies.create(draft);
    const e = await lastValueFrom(limits.stage(of(req()))).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GatewayError);
    expect(e).toMatchObject({ code: 'usage_limits_unavailable', status: 503 });
    expect(calls).toContainEqual(['limitStoreError', 'refused']);
  });
});
