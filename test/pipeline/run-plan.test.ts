/**
 * PlanRunner: a plan compiled once into a function of the request context, and the operators each
 * node kind is wired to. Targets are FakeOpenAI servers on 127.0.0.1 reached over real sockets; the
 * clock is manual and virtual time drives the race's hedge.
 */
import { VirtualTimeScheduler } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { embedLocal } from '../../src/cache/local-embedder.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import type { CacheDeps, PipelineDeps } from '../../src/pipeline/context.js';
import { PlanRunner } from '../../src/pipeline/run-plan.js';
import { stageDepsPerTest } from '../operators/hook-stages.helpers.js';
import type { StrategyNode } from '../../src/plan/types.js';
import { MemoryCacheStore } from '../../src/state/memory/cache-store.js';
import { MemoryVectorIndex } from '../../src/state/memory/vector-index.js';
import { FakeOpenAI, openAIError, type ScriptedResponse } from '../fakes/openai-server.js';
import { answer, CHAT_PATH, collect, context, harness, plan, target, type Harness } from './_harness.js';

let a: FakeOpenAI;
let b: FakeOpenAI;
const open: Harness[] = [];

/** A harness closed after the file's tests. */
function h(over: Partial<PipelineDeps> = {}): Harness {
  const x = harness(over);
  open.push(x);
  return x;
}

beforeAll(async () => {
  [a, b] = await Promise.all([FakeOpenAI.start(), FakeOpenAI.start()]);
});

afterEach(() => {
  a.reset();
  b.reset();
});

afterAll(async () => {
  await Promise.all(open.map((x) => x.close()));
  await Promise.all([a?.close(), b?.close()]);
});

const fallbackOf = (...targets: unknown[]) => ({ strategy: { mode: 'fallback' }, targets });
/** A retryable failure that asks for no wait, so retries happen at once. */
const busy = (status = 503): ScriptedResponse => ({ ...openAIError(status, 'busy'), headers: { 'retry-after-ms': '0' } });

describe('PlanRunner: compiled once per plan node', () => {
  it('compile returns the same function for the same node object, and run uses it for every request', async () => {
    const { deps, clock } = h();
    const runner = new PlanRunner(deps);
    const node = plan(fallbackOf(target(a), target(b)));
    const first = runner.compile(node);
    expect(runner.compile(node)).toBe(first);
    const r1 = answer(await collect(runner.run(node, context(clock))));
    const r2 = answer(await collect(runner.run(node, context(clock))));
    expect(runner.compile(node)).toBe(first);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect(a.requests).toHaveLength(2);
  });

  it('children are compiled with their parent and shared: a single strategy is its child', () => {
    const runner = new PlanRunner(h().deps);
    const node = plan({ strategy: { mode: 'single' }, targets: [target(a)] }) as StrategyNode;
    expect(runner.compile(node)).toBe(runner.compile(node.children[0]!));
  });

  it('is keyed by the node object: an equal plan built again, or another runner, compiles its own', () => {
    const { deps } = h();
    const runner = new PlanRunner(deps);
    const config = fallbackOf(target(a), target(b));
    const p1 = plan(config);
    const p2 = plan(config);
    expect(p2).toEqual(p1);
    expect(runner.compile(p2)).not.toBe(runner.compile(p1));
    expect(new PlanRunner(deps).compile(p1)).not.toBe(runner.compile(p1));
  });

  it('compiling and running send nothing: the Observable is cold until subscribed', async () => {
    const { deps, clock } = h();
    const runner = new PlanRunner(deps);
    const obs = runner.run(plan(target(a)), context(clock));
    expect(a.requests).toHaveLength(0);
    answer(await collect(obs));
    expect(a.requests).toHaveLength(1);
  });
});

describe('PlanRunner: strategies', () => {
  it('fallback: moves past a failed target to the next, reports the move, answers with the next one', async () => {
    const { deps, clock, calls } = h();
    a.enqueue(CHAT_PATH, openAIError(500, 'down'));
    const r = answer(await collect(new PlanRunner(deps).run(plan(fallbackOf(target(a), target(b, { name: 'backup' }))), context(clock))));
    expect(r.status).toBe(200);
    expect(r.meta.target).toBe('config.targets[1]');
    expect([a.requests.length, b.requests.length]).toEqual([1, 1]);
    expect(calls.filter((c) => c[0] === 'fallback')).toEqual([['fallback', 'config', 'config.targets[0]']]);
  });

  it('fallback: on_status_codes narrows which failures move on', async () => {
    const { deps, clock } = h();
    const runner = new PlanRunner(deps);
    const node = plan({ strategy: { mode: 'fallback', on_status_codes: [429] }, targets: [target(a), target(b)] });
    a.enqueue(CHAT_PATH, openAIError(500, 'down'), openAIError(429, 'slow down'));
    const { error } = await collect(runner.run(node, context(clock)));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(500);
    expect(b.requests).toHaveLength(0);
    const r = answer(await collect(runner.run(node, context(clock))));
    expect(r.meta.target).toBe('config.targets[1]');
    expect(b.requests).toHaveLength(1);
  });

  it('loadbalance: picks by weight with the deps random source, per request', async () => {
    let rnd = 0;
    const { deps, clock } = h({ random: () => rnd });
    const runner = new PlanRunner(deps);
    const node = plan({ strategy: { mode: 'loadbalance' }, targets: [target(a, { weight: 3 }), target(b, { weight: 1 })] });
    const picks: string[] = [];
    for (const r of [0, 0.74, 0.75, 0.99]) {
      rnd = r;
      picks.push(answer(await collect(runner.run(node, context(clock)))).meta.target);
    }
    expect(picks).toEqual(['config.targets[0]', 'config.targets[0]', 'config.targets[1]', 'config.targets[1]']);
  });

  it('loadbalance: a target whose circuit is open is not picked; when none can serve, 503 circuit_open with Retry-After', async () => {
    const { deps, clock } = h({ random: () => 0 });
    const runner = new PlanRunner(deps);
    const cb = { cb_config: { failure_threshold: 1, cooldown_interval: 30_000 } };
    const node = plan({ strategy: { mode: 'loadbalance' }, targets: [target(a, cb), target(b, cb)] });
    a.enqueue(CHAT_PATH, openAIError(500, 'down'));
    expect((await collect(runner.run(node, context(clock)))).error.status).toBe(500); // a fails: its circuit opens
    const r = answer(await collect(runner.run(node, context(clock))));
    expect(r.meta.target).toBe('config.targets[1]'); // random 0 would pick a
    b.enqueue(CHAT_PATH, openAIError(500, 'down'));
    expect((await collect(runner.run(node, context(clock)))).error.status).toBe(500); // b fails: both open
    clock.advance(10_000);
    const { error } = await collect(runner.run(node, context(clock)));
    expect(error).toMatchObject({ code: 'circuit_open', status: 503, headers: { 'retry-after': '20' } });
    expect([a.requests.length, b.requests.length]).toEqual([1, 2]);
  });

  it('conditional: the compiled conditions are evaluated per request over metadata, params and url.pathname', async () => {
    const { deps, clock } = h();
    const runner = new PlanRunner(deps);
    const node = plan({
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { 'metadata.tier': { $eq: 'pro' } }, then: 'pro' },
          { query: { 'params.model': { $in: ['gpt-4.1'] } }, then: 'big' },
          { query: { 'url.pathname': { $regex: '^/v1/completions' } }, then: 'big' },
        ],
        default: 'free',
      },
      targets: [target(a, { name: 'pro' }), target(b, { name: 'big' }), target(a, { name: 'free' })],
    });
    const via = async (ctx: Parameters<typeof runner.run>[1]) => answer(await collect(runner.run(node, ctx))).meta.target;
    expect(await via(context(clock, { metadata: { tier: 'pro' } }))).toBe('config.targets[0]');
    expect(await via(context(clock, { request: { body: { model: 'gpt-4.1', messages: [] } } }))).toBe('config.targets[1]');
    expect(await via(context(clock, { pathname: '/v1/completions' }))).toBe('config.targets[1]');
    expect(await via(context(clock, { metadata: { tier: 'basic' } }))).toBe('config.targets[2]');
    expect(await via(context(clock))).toBe('config.targets[2]');
  });

  it('race: the next target starts hedge_after_ms later on the deps scheduler; the first answer wins and the loser is aborted', async () => {
    const scheduler = new VirtualTimeScheduler();
    const { deps, clock } = h({ scheduler });
    a.enqueue(CHAT_PATH, { hang: true });
    const outcome = collect(new PlanRunner(deps).run(plan({ strategy: { mode: 'race', hedge_after_ms: 400 }, targets: [target(a), target(b)] }), context(clock)));
    const [slow] = await a.waitForRequests(1);
    expect(b.requests).toHaveLength(0); // not before the hedge delay
    scheduler.flush(); // 400 ms pass
    const r = answer(await outcome);
    expect(r.meta.target).toBe('config.targets[1]');
    expect(b.requests).toHaveLength(1);
    await slow!.closed;
    expect(slow!.aborted).toBe(true);
  });
});

describe('PlanRunner: input guardrails', () => {
  const guard = (wordMax: number) => ({ input_guardrails: [{ 'default.wordCount': { minWords: 1, maxWords: wordMax }, deny: true }] });
  const { deps: stageDeps } = stageDepsPerTest();
  const hookDeps = () => stageDeps().deps;

  it('run when the Observable is subscribed, not when it is made (it stays cold), once per subscription', async () => {
    const { deps, clock } = h({ hooks: hookDeps() });
    const ctx = context(clock);
    const events = new PlanRunner(deps).run(plan({ ...target(a), ...guard(10) }), ctx);
    expect(ctx.outcome.hooks).toBeUndefined();
    expect(answer(await collect(events)).status).toBe(200);
    expect(ctx.outcome.hooks?.before.map((x) => [x.id, x.verdict])).toEqual([['input_guardrails[0]', true]]);
    await collect(events);
    expect(ctx.outcome.hooks?.before).toHaveLength(2);
    expect(a.requests).toHaveLength(2);
  });

  it('a context has the same members, in the same order, whether its hooks ran or not (one hidden class)', async () => {
    const { deps, clock } = h({ hooks: hookDeps() });
    const plain = context(clock);
    const guarded = context(clock);
    const runner = new PlanRunner(deps);
    await collect(runner.run(plan(target(a)), plain));
    await collect(runner.run(plan({ ...target(a), ...guard(10) }), guarded));
    expect(plain.outcome.hooks).toBeUndefined();
    expect(guarded.outcome.hooks?.before).toHaveLength(1);
    expect(Object.keys(guarded)).toEqual(Object.keys(plain));
  });

  it('a deny ends the request with 446 before the provider is called', async () => {
    const { deps, clock } = h({ hooks: hookDeps() });
    const o = await collect(new PlanRunner(deps).run(plan({ ...target(a), input_guardrails: [{ 'default.contains': { words: ['hi'], operator: 'none' }, deny: true }] }), context(clock)));
    expect(o.error).toBeInstanceOf(GatewayError);
    expect((o.error as GatewayError).status).toBe(446);
    expect(a.requests).toHaveLength(0);
  });
});

describe('PlanRunner: retry', () => {
  it('retries a target attempts times and reports each retry with the target labels', async () => {
    const { deps, clock, calls } = h();
    a.enqueue(CHAT_PATH, busy(), busy(429));
    const r = answer(await collect(new PlanRunner(deps).run(plan(target(a, { retry: { attempts: 2, use_retry_after_headers: true } })), context(clock))));
    expect(r.status).toBe(200);
    expect(r.meta.retries).toBe(2);
    expect(a.requests).toHaveLength(3);
    expect(calls.filter((c) => c[0] === 'retry')).toEqual([
      ['retry', { target: 'config', provider: 'openai', endpoint: 'chat' }],
      ['retry', { target: 'config', provider: 'openai', endpoint: 'chat' }],
    ]);
  });

  it("reads the time budget from each request's context: the same compiled plan retries for a fresh request, not for one whose budget is spent", async () => {
    const { deps, clock } = h({ requestBudgetMs: 1000 });
    const runner = new PlanRunner(deps);
    const node = plan(target(a, { retry: { attempts: 1, use_retry_after_headers: true } }));
    const wait10: ScriptedResponse = { ...openAIError(503, 'busy'), headers: { 'retry-after-ms': '10' } };

    a.enqueue(CHAT_PATH, wait10);
    const fresh = answer(await collect(runner.run(node, context(clock))));
    expect(fresh.meta.retries).toBe(1);
    expect(a.requests).toHaveLength(2);

    a.reset();
    a.enqueue(CHAT_PATH, wait10);
    // Started 995 ms ago: 5 ms of the 1000 ms budget left, less than the 10 ms the provider asks for.
    const { error } = await collect(runner.run(node, context(clock, { startedAt: clock.now() - 995 })));
    expect(error).toMatchObject({ code: 'upstream_error', status: 503 });
    expect(a.requests).toHaveLength(1);
  });
});

describe('PlanRunner: circuit breaker', () => {
  const cb = { cb_config: { failure_threshold: 2, cooldown_interval: 30_000 } };

  it('reports the state it starts in, opens after failure_threshold failures, refuses without calling the provider, probes after the cooldown, and reports each state', async () => {
    const { deps, clock, calls } = h();
    const runner = new PlanRunner(deps);
    const node = plan(target(a, { name: 'primary', ...cb }));
    a.enqueue(CHAT_PATH, openAIError(500, 'down'), openAIError(500, 'down'));
    expect((await collect(runner.run(node, context(clock)))).error.status).toBe(500);
    expect((await collect(runner.run(node, context(clock)))).error.status).toBe(500);
    const refused = await collect(runner.run(node, context(clock)));
    expect(refused.error).toMatchObject({ code: 'circuit_open', status: 503, headers: { 'retry-after': '30' } });
    expect(a.requests).toHaveLength(2);
    clock.advance(30_001);
    expect(answer(await collect(runner.run(node, context(clock)))).status).toBe(200);
    expect(a.requests).toHaveLength(3);
    expect(calls.filter((c) => c[0] === 'circuit').map((c) => [c[1], c[2]])).toEqual([
      ['primary', 'closed'],
      ['primary', 'open'],
      ['primary', 'half-open'],
      ['primary', 'closed'],
    ]);
  });

  it('sits outside retry: a request that exhausts its retries counts as one failure', async () => {
    const { deps, clock } = h();
    const runner = new PlanRunner(deps);
    const node = plan(target(a, { ...cb, retry: { attempts: 2, use_retry_after_headers: true } }));
    a.enqueue(CHAT_PATH, busy(), busy(), busy(), busy(), busy(), busy());
    expect((await collect(runner.run(node, context(clock)))).error.status).toBe(503);
    expect(a.requests).toHaveLength(3);
    // One failure so far (threshold 2): the next request still reaches the provider, retries and all.
    expect((await collect(runner.run(node, context(clock)))).error.status).toBe(503);
    expect(a.requests).toHaveLength(6);
    expect((await collect(runner.run(node, context(clock)))).error.code).toBe('circuit_open');
    expect(a.requests).toHaveLength(6);
  });

  it('keys the circuit by target identity, not by plan object: a plan built again sees the open circuit', async () => {
    const { deps, clock } = h();
    const runner = new PlanRunner(deps);
    const config = target(a, { cb_config: { failure_threshold: 1, cooldown_interval: 30_000 } });
    a.enqueue(CHAT_PATH, openAIError(500, 'down'));
    expect((await collect(runner.run(plan(config), context(clock)))).error.status).toBe(500);
    expect((await collect(runner.run(plan(config), context(clock)))).error.code).toBe('circuit_open');
    expect(a.requests).toHaveLength(1);
  });
});

describe('PlanRunner: cache', () => {
  function cacheDeps(): CacheDeps {
    return {
      store: new MemoryCacheStore(),
      vectors: new MemoryVectorIndex(),
      embed: (text) => Promise.resolve(embedLocal(text)),
      available: () => true,
      defaultTtlSeconds: 60,
      defaultThreshold: 0.95,
      inflight: new Map(),
    };
  }
  const cachedFallback = () => ({ cache: { mode: 'simple', max_age: 60 }, ...fallbackOf(target(a), target(b)) });

  it('the level that declares the cache wraps its subtree once: MISS then HIT, one lookup per request', async () => {
    const { deps, clock, calls } = h({ cache: cacheDeps() });
    const runner = new PlanRunner(deps);
    const node = plan(cachedFallback());
    const first = answer(await collect(runner.run(node, context(clock))));
    expect(first.meta.cacheStatus).toBe('MISS');
    const second = answer(await collect(runner.run(node, context(clock))));
    expect(second.meta.cacheStatus).toBe('HIT');
    expect(second.raw).toBe(first.raw ?? JSON.stringify(first.body)); // the cached bytes
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(0);
    // The targets inherit the cache setting but do not declare it: no second lookup below the root.
    expect(calls.filter((c) => c[0] === 'cacheLookup')).toEqual([
      ['cacheLookup', 'simple', 'MISS'],
      ['cacheLookup', 'simple', 'HIT'],
    ]);
  });

  it('a cache declared on one target caches that target only', async () => {
    const { deps, clock, calls } = h({ cache: cacheDeps() });
    const runner = new PlanRunner(deps);
    const node = plan(fallbackOf(target(a), target(b, { cache: { mode: 'simple', max_age: 60 } })));
    a.setDefault(CHAT_PATH, openAIError(500, 'down'));
    for (let i = 0; i < 2; i++) expect(answer(await collect(runner.run(node, context(clock)))).meta.target).toBe('config.targets[1]');
    expect(a.requests).toHaveLength(2); // never cached: tried each time
    expect(b.requests).toHaveLength(1); // the second answer came from b's cache
    expect(calls.filter((c) => c[0] === 'cacheLookup').map((c) => c[2])).toEqual(['MISS', 'HIT']);
  });

  it('without cache deps the cache setting does nothing: every request reaches the provider', async () => {
    const { deps, clock, calls } = h();
    const runner = new PlanRunner(deps);
    const node = plan(cachedFallback());
    for (let i = 0; i < 2; i++) expect(answer(await collect(runner.run(node, context(clock)))).meta.cacheStatus).toBeUndefined();
    expect(a.requests).toHaveLength(2);
    expect(calls.filter((c) => c[0] === 'cacheLookup')).toEqual([]);
  });
});
