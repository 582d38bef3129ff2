/**
 * Micro-benchmarks of the gateway's hot functions, in one process, no sockets: nanoseconds per call.
 *
 *   npm run bench:micro                      # every case, about 20 s
 *   npm run bench:micro -- --only resolve    # cases whose name contains "resolve"
 *   npm run bench:micro -- --help
 *
 * Each case is warmed up (JIT), then timed over several rounds of a fixed number of calls (chosen
 * from the warm-up speed so that a round lasts about --round-ms); the figure is the median ns/call
 * over the rounds, with the fastest and slowest round beside it. Before timing, each case's result is
 * checked once (a plan run must answer 200, a stream must carry all its chunks), so a broken case
 * fails instead of timing an error path.
 *
 * The macro benchmark (benchmarks/run.ts) says what a request costs end to end; these say where the
 * per-request work goes: body validation, config resolution (plan cache hit and miss), one
 * single-target plan run against a stub dispatcher (no HTTP), SSE decoding and encoding, and each
 * provider's translation next to the OpenAI pass-through (`--only provider`; fixtures in
 * benchmarks/provider-fixtures.ts).
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { firstValueFrom, of, type Observable } from 'rxjs';
import type { Dispatcher } from 'undici';
import { parseBody } from '../src/config/bodies.js';
import type { Headers } from '../src/config/headers.js';
import { ConfigResolver } from '../src/plan/resolve.js';
import { noopTelemetry } from '../src/metrics/telemetry.js';
import { newContext, type PipelineDeps } from '../src/pipeline/context.js';
import type { GatewayEvent } from '../src/upstream/events.js';
import { PlanRunner } from '../src/pipeline/run-plan.js';
import type { PlanDeps } from '../src/plan/build-plan.js';
import type { PlanNode } from '../src/plan/types.js';
import { ProviderRegistry, defaultProviders } from '../src/providers/registry.js';
import { HostGuard } from '../src/security/host-guard.js';
import { MemoryBreakerStore } from '../src/state/memory/breaker-store.js';
import { createSseDecoder } from '../src/upstream/sse-decode.js';
import { sseData } from '../src/upstream/sse-encode.js';
import { MemoryVersionedStore } from '../src/state/memory/versioned-store.js';
import { MemoryApiKeyStore } from '../src/state/memory/api-key-store.js';
import { Router } from '../src/http/router.js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { createAwsEventStreamDecoder } from '../src/upstream/aws-event-stream.js';
import type { Provider, ProviderRequest, StreamEvent } from '../src/providers/types.js';
import { PROVIDER_ANSWERS, PROVIDER_CHAT_REQUEST, PROVIDER_IDS, PROVIDER_MODELS, PROVIDER_STREAM_EVENTS, PROVIDER_STREAM_PRELUDE, PROVIDER_TARGETS } from './provider-fixtures.js';
import { compileHooks } from '../src/plan/hooks.js';
import { createCheckDeps } from '../src/checks/deps.js';
import { hookResultsBody, runHookSync, type HookAccount } from '../src/checks/hooks.js';
import { requestInput, responseInput } from '../src/checks/text.js';
import { requestHooks, type HookStageDeps, type HookedRequest } from '../src/operators/request-hooks.js';
import { responseHooks } from '../src/operators/response-hooks.js';
import { hookResults } from '../src/operators/hook-results.js';
import { median } from './lib.js';
import { GUARDRAILS } from './scenarios/guardrails.js';
import type { VirtualKey } from '../src/config/bootstrap.js';
import type { Config } from '../src/config/schema.js';
import { PromptRenderer } from '../src/pipeline/prompt.js';
import type { PromptRecord } from '../src/state/prompt-store.js';

// ---------------------------------------------------------------------------------------------
// The timing loop

export interface MicroCase {
  name: string;
  /** One call of the measured work. A promise is awaited (the await is part of the figure). */
  fn: () => unknown;
  /** Throws when a result is not what the case should produce (run once, before timing). */
  check?: (result: unknown) => void;
}

export interface MicroOptions {
  /** Warm-up time per case, ms. */
  warmupMs: number;
  /** Timed rounds per case. */
  rounds: number;
  /** Target duration of one round, ms (sets the calls per round from the warm-up speed). */
  roundMs: number;
  /** Fixed calls per round instead (and as many warm-up calls): for smoke tests. */
  iterations?: number;
  /**
   * Cold mode: before each timed call, write one byte in every 64-byte line of a buffer this many KiB
   * long, pushing the case's code and data out of the caches, then time that one call alone. Each
   * round is then `COLD_CALLS_PER_ROUND` such calls, and a figure is their median (see
   * benchmarks/README.md, "Cold caches").
   */
  evictKb?: number;
}

/** Timed calls per round in cold mode (each preceded by an eviction). */
export const COLD_CALLS_PER_ROUND = 64;

export const DEFAULT_OPTIONS: MicroOptions = { warmupMs: 300, rounds: 7, roundMs: 150 };

export interface MicroResult {
  name: string;
  /** Median over the rounds. */
  nsPerCall: number;
  minNs: number;
  maxNs: number;
  callsPerRound: number;
  rounds: number;
}

/** Keeps every result reachable, so no call can be optimised away. */
let sink: unknown;

async function callMany(fn: () => unknown, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = fn();
    sink = r instanceof Promise ? await r : r;
  }
}

/** A buffer written line by line before each cold call; made once per size. */
let evictBuffer: Uint8Array | undefined;

/** Touches every cache line of a `kb` KiB buffer (written, so the lines are also dirty and must be written back). */
function evict(kb: number): void {
  const bytes = kb * 1024;
  if (evictBuffer?.length !== bytes) evictBuffer = new Uint8Array(bytes);
  const b = evictBuffer;
  for (let i = 0; i < bytes; i += 64) b[i]!++;
}

/** Cold mode: rounds of single calls, each after an eviction; the round's figure is the median of its calls. */
async function measureCold(c: MicroCase, o: MicroOptions, kb: number): Promise<MicroResult> {
  const ns: number[] = [];
  const one: number[] = new Array<number>(COLD_CALLS_PER_ROUND);
  for (let r = 0; r < o.rounds; r++) {
    for (let i = 0; i < COLD_CALLS_PER_ROUND; i++) {
      evict(kb);
      const t0 = process.hrtime.bigint();
      const x = c.fn();
      sink = x instanceof Promise ? await x : x;
      one[i] = Number(process.hrtime.bigint() - t0);
    }
    ns.push(median(one));
  }
  return { name: c.name, nsPerCall: median(ns), minNs: Math.min(...ns), maxNs: Math.max(...ns), callsPerRound: COLD_CALLS_PER_ROUND, rounds: o.rounds };
}

export async function measure(c: MicroCase, o: MicroOptions): Promise<MicroResult> {
  let first = c.fn();
  if (first instanceof Promise) first = await first;
  c.check?.(first);
  let perRound: number;
  if (o.iterations !== undefined) {
    perRound = Math.max(1, o.iterations);
    await callMany(c.fn, perRound);
  } else {
    let calls = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < o.warmupMs) {
      await callMany(c.fn, 16);
      calls += 16;
    }
    perRound = Math.max(1, Math.round((o.roundMs * calls) / (performance.now() - t0)));
  }
  if (o.evictKb !== undefined) return measureCold(c, o, o.evictKb);
  const ns: number[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const t0 = process.hrtime.bigint();
    await callMany(c.fn, perRound);
    ns.push(Number(process.hrtime.bigint() - t0) / perRound);
  }
  return { name: c.name, nsPerCall: median(ns), minNs: Math.min(...ns), maxNs: Math.max(...ns), callsPerRound: perRound, rounds: o.rounds };
}

// ---------------------------------------------------------------------------------------------
// Fixtures

const CHAT_MINIMAL = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };

/** The providers' benchmark request (6 messages, a tool round trip, tools, parameters), streamed with usage. */
const CHAT_TYPICAL = { ...PROVIDER_CHAT_REQUEST, stream: true, stream_options: { include_usage: true }, user: 'user-1234' };

const EMBEDDINGS_BATCH = { model: 'text-embedding-3-small', input: Array.from({ length: 16 }, (_, i) => `document number ${i}: some text to embed`) };

const API_KEY = 'sk-micro-0123456789abcdef';
const target = { provider: 'openai', api_key: API_KEY };
const CONFIG_SINGLE = JSON.stringify(target);
const CONFIG_SINGLE_B = JSON.stringify({ provider: 'openai', api_key: `${API_KEY}-b` });
const CONFIG_FALLBACK = JSON.stringify({
  strategy: { mode: 'fallback' },
  retry: { attempts: 2 },
  request_timeout: 10_000,
  cb_config: { failure_threshold: 5, cooldown_interval: 30_000 },
  targets: [target, { provider: 'groq', api_key: API_KEY }, { provider: 'openai', api_key: `${API_KEY}-c`, override_params: { model: 'gpt-4o' } }],
});
const CONFIG_FALLBACK_B = CONFIG_FALLBACK.replace('"attempts":2', '"attempts":3');

const header = (config: string): Headers => ({
  'x-gateway-api-key': 'sk-gateway',
  'x-gateway-config': config,
  'content-type': 'application/json',
  authorization: 'Bearer sk-client',
});
const LOOSE_HEADERS: Headers = {
  'x-gateway-api-key': 'sk-gateway',
  'x-gateway-provider': 'openai',
  'content-type': 'application/json',
  authorization: `Bearer ${API_KEY}`,
};

const CREATED = 1_700_000_000;
const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-micro',
    object: 'chat.completion',
    created: CREATED,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?' }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 },
  }),
);
const chunkJson = (i: number, last: boolean): string =>
  JSON.stringify({
    id: 'chatcmpl-micro',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: 'gpt-4o-mini-2024-07-18',
    system_fingerprint: 'fp_micro',
    choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content: '' } : last ? {} : { content: ` tok${i}` }, logprobs: null, finish_reason: last ? 'stop' : null }],
  });
const STREAM_CHUNKS = 20;
const CHUNK_JSON = Array.from({ length: STREAM_CHUNKS }, (_, i) => chunkJson(i, i === STREAM_CHUNKS - 1));
const USAGE_JSON = JSON.stringify({ id: 'chatcmpl-micro', object: 'chat.completion.chunk', created: CREATED, model: 'gpt-4o-mini-2024-07-18', choices: [], usage: { prompt_tokens: 9, completion_tokens: 19, total_tokens: 28 } });
/** The upstream's stream as it arrives: one buffer per event, then the usage chunk and [DONE]. */
const STREAM_PARTS = [...CHUNK_JSON, USAGE_JSON, '[DONE]'].map((d) => Buffer.from(`data: ${d}\n\n`));
const MULTILINE_JSON = JSON.stringify({ a: 1, b: [1, 2, 3] }, null, 2);

// ---------------------------------------------------------------------------------------------
// A stub dispatcher: answers every request from memory, as undici's request() would (no socket)

/** A response body that delivers its parts once call.ts has attached its 'end' listener. */
class StubBody extends EventEmitter {
  constructor(private readonly parts: readonly Buffer[]) {
    super();
  }
  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    super.on(event, listener);
    if (event === 'end') {
      queueMicrotask(() => {
        for (const p of this.parts) this.emit('data', p);
        this.emit('end');
      });
    }
    return this;
  }
}

function stubDispatcher(): Dispatcher {
  const json = { 'content-type': 'application/json' };
  const sse = { 'content-type': 'text/event-stream' };
  return {
    request(opts: { body?: string }) {
      const stream = typeof opts.body === 'string' && opts.body.includes('"stream":true');
      return Promise.resolve({ statusCode: 200, headers: stream ? sse : json, body: new StubBody(stream ? STREAM_PARTS : [COMPLETION]) });
    },
  } as unknown as Dispatcher;
}

/** Subscribes and resolves with the events once the plan's Observable completes. */
function collect(obs: Observable<GatewayEvent>): Promise<GatewayEvent[]> {
  return new Promise((resolve, reject) => {
    const events: GatewayEvent[] = [];
    obs.subscribe({ next: (e) => events.push(e), error: reject, complete: () => resolve(events) });
  });
}

function expect(ok: boolean, what: string): void {
  if (!ok) throw new Error(`micro-benchmark check failed: ${what}`);
}

// ---------------------------------------------------------------------------------------------
// The cases

export function microCases(): MicroCase[] {
  const registry = new ProviderRegistry(defaultProviders());
  const planDeps: PlanDeps = { virtualKeys: new MemoryVersionedStore<VirtualKey>(), registry, hostGuard: new HostGuard({ trusted: [] }) };
  const saved = new MemoryVersionedStore<Config>();
  const hitResolver = new ConfigResolver(planDeps, saved);
  // One cached plan and two header sets taking turns: every call compiles.
  const missResolver = new ConfigResolver(planDeps, saved, 1);
  const turn = <T>(a: T, b: T): (() => T) => {
    let i = 0;
    return () => (i++ & 1 ? b : a);
  };
  const singleMiss = turn(header(CONFIG_SINGLE), header(CONFIG_SINGLE_B));
  const fallbackMiss = turn(header(CONFIG_FALLBACK), header(CONFIG_FALLBACK_B));

  const stub = stubDispatcher();
  const deps: PipelineDeps = {
    registry,
    dispatcher: stub,
    telemetry: noopTelemetry,
    breakers: new MemoryBreakerStore(),
    streamIdleTimeoutMs: 60_000,
    requestBudgetMs: 600_000,
    now: Date.now,
    random: Math.random,
  };
  const plan: PlanNode = hitResolver.resolve(header(CONFIG_SINGLE));
  const runner = new PlanRunner(deps);
  const reqHeaders = header(CONFIG_SINGLE);
  const jsonBody = parseBody('chat', CHAT_MINIMAL) as Record<string, unknown>;
  const streamBody = parseBody('chat', { ...CHAT_MINIMAL, stream: true }) as Record<string, unknown>;
  const runOnce = (body: Record<string, unknown>, stream: boolean): Promise<GatewayEvent[]> =>
    collect(runner.run(plan, newContext('trace-micro', { endpoint: 'chat', body, stream, headers: reqHeaders }, deps.now(), '/v1/chat/completions')));

  // The first target answers: what a routed request costs over a single target (breaker, retry, fallback).
  const fallbackPlan: PlanNode = hitResolver.resolve(header(CONFIG_FALLBACK));
  // Gateway keys: one, and 1,000 (the lookup is by digest, so the count should not matter).
  const benchKey = (i: number): string => `sk-sluice-bench-key-${String(i).padStart(24, '0')}`;
  const oneKey = new MemoryApiKeyStore([{ key: benchKey(0), record: { name: 'k0' } }]);
  const manyKeys = new MemoryApiKeyStore(Array.from({ length: 1000 }, (_, i) => ({ key: benchKey(i), record: { name: `k${i}` } })));
  const lastKey = benchKey(999);
  // The hot router as the gateway builds it, plus the patterns the next issues add.
  const router = new Router<string>();
  for (const [m, p] of [['POST', '/v1/chat/completions'], ['POST', '/v1/completions'], ['POST', '/v1/embeddings'], ['GET', '/v1/models']] as const) router.add(m, p, p);
  router.add('GET', '/v1/responses/:id', 'response').add('GET', '/v1/guardrails/:id', 'guardrail').add('GET', '/v1/policies/usage-limits/:id', 'limit');
  // A resolver whose cached plans must be re-checked on every call: each call writes another virtual key first.
  const churnKeys = new MemoryVersionedStore<VirtualKey>();
  const churnResolver = new ConfigResolver({ ...planDeps, virtualKeys: churnKeys }, saved);
  const churnPlan = churnResolver.resolve(header(CONFIG_SINGLE));
  const churnValue: VirtualKey = { provider: 'openai', api_key: 'sk-fake-churn' };

  // Guardrails: the macro scenario's input and output guardrails, compiled as a plan does.
  const guardDeps: HookStageDeps = { checks: createCheckDeps(new HostGuard({ trusted: [] })), telemetry: noopTelemetry, onAsync: () => undefined };
  const inputHooks = compileHooks('input_guardrails', GUARDRAILS.input_guardrails, 'config');
  const outputHooks = compileHooks('output_guardrails', GUARDRAILS.output_guardrails, 'config');
  const inputStage = requestHooks<HookedRequest>(inputHooks, guardDeps);
  const outputStage = responseHooks(outputHooks, 'config', guardDeps);
  const hookedContext = (): HookedRequest => ({ traceId: 'trace-micro', request: { endpoint: 'chat', body: jsonBody, headers: reqHeaders, stream: false } });
  const answer: GatewayEvent = { type: 'json', status: 200, body: JSON.parse(COMPLETION.toString()) as unknown, raw: COMPLETION.toString(), meta: { provider: 'openai', target: 'config', retries: 0 } };
  const passed = (a: HookAccount | undefined, phase: 'before' | 'after'): boolean => a?.[phase].length === 1 && a[phase][0]!.verdict && a[phase][0]!.checks.length === 2 && !a.failed;
  // The account those guardrails leave on a request (what the hookResults stage serialises).
  const reqInput = requestInput({ endpoint: 'chat', body: jsonBody, headers: reqHeaders });
  const resInput = responseInput({ endpoint: 'chat', body: jsonBody, headers: reqHeaders, response: { body: answer.body, status: 200 } });
  const guardedAccount: HookAccount = {
    before: inputHooks.map((h) => runHookSync(h, reqInput, guardDeps.checks).result),
    after: outputHooks.map((h) => ({ ...runHookSync(h, resInput, guardDeps.checks).result, target: 'config' })),
    failed: false,
  };
  expect(passed(guardedAccount, 'before') && passed(guardedAccount, 'after'), 'the hook-results case: both guardrails run and passed on its account');
  const guardedPlan: PlanNode = hitResolver.resolve(header(JSON.stringify({ ...target, ...GUARDRAILS })));
  const guardedRunner = new PlanRunner({ ...deps, hooks: guardDeps });

  // Prompts: what a request without a prompt pays, and one rendering of a parsed template.
  const promptRecord: PromptRecord = {
    id: 'p-1',
    slug: 'support-reply',
    version_id: 'v-1',
    name: 'Support reply',
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You answer for {{company}}. Be {{tone}}.' },
      { role: 'user', content: 'Customer {{customer.name}} asks: {{question}}' },
    ],
    parameters: { temperature: 0.2, max_tokens: 200 },
    workspace_id: 'ws',
    created_at: '',
    last_updated_at: '',
  };
  const prompts = new PromptRenderer<undefined>(() => promptRecord, () => ({}));
  const promptRef = { ref: 'support-reply', param: 'config.prompt_id' };
  const promptBody = { variables: { company: 'Acme', tone: 'brief', customer: { name: 'Ada' }, question: 'Where is my order?' } };

  const decoderEvents = { n: 0 };
  const sharedDecoder = createSseDecoder(() => decoderEvents.n++);
  const oneEvent = STREAM_PARTS[1]!;

  return [
    { name: 'ApiKeyStore.verify, 1 key', fn: () => oneKey.verify(benchKey(0)), check: (r) => expect((r as { name?: string })?.name === 'k0', 'the key is found') },
    { name: 'ApiKeyStore.verify, 1,000 keys', fn: () => manyKeys.verify(lastKey), check: (r) => expect((r as { name?: string })?.name === 'k999', 'the key is found') },
    { name: 'ApiKeyStore.verify, unknown key, 1,000 keys', fn: () => manyKeys.verify('sk-sluice-not-a-stored-key-000000'), check: (r) => expect(r === undefined, 'not found') },
    { name: 'Router.match, exact path', fn: () => router.match('POST', '/v1/chat/completions'), check: (r) => expect((r as { handler?: string })?.handler === '/v1/chat/completions', 'the chat route') },
    { name: 'Router.match, pattern (3rd)', fn: () => router.match('GET', '/v1/policies/usage-limits/ul-1'), check: (r) => expect((r as { params?: { id?: string } })?.params?.id === 'ul-1', 'the id') },
    { name: 'parseBody chat, minimal', fn: () => parseBody('chat', CHAT_MINIMAL) },
    { name: 'PromptRenderer.render, no prompt (every request)', fn: () => prompts.render(undefined, 'chat', CHAT_MINIMAL, undefined), check: (b) => expect(b === CHAT_MINIMAL, 'the body as it is') },
    {
      name: 'PromptRenderer.render, 2 messages, 4 variables (parsed once)',
      fn: () => prompts.render(promptRef, 'chat', promptBody, undefined),
      check: (b) => expect((b as { messages: { content: string }[] }).messages[1]!.content === 'Customer Ada asks: Where is my order?', 'rendered'),
    },
    { name: 'parseBody chat, 6 messages + tools + params', fn: () => parseBody('chat', CHAT_TYPICAL) },
    { name: 'parseBody embeddings, 16 inputs', fn: () => parseBody('embeddings', EMBEDDINGS_BATCH) },
    {
      name: 'ConfigResolver.resolve hit, inline config',
      fn: () => hitResolver.resolve(header(CONFIG_SINGLE)),
      check: (p) => expect(p === plan, 'a hit returns the cached plan'),
    },
    { name: 'ConfigResolver.resolve hit, provider headers', fn: () => hitResolver.resolve(LOOSE_HEADERS) },
    {
      name: 'ConfigResolver.resolve hit after a write to another virtual key (write included)',
      fn: () => {
        void churnKeys.put('other', churnValue);
        return churnResolver.resolve(header(CONFIG_SINGLE));
      },
      check: (p) => expect(p === churnPlan, 'an unrelated write keeps the cached plan'),
    },
    {
      name: 'ConfigResolver.resolve miss, inline single target',
      fn: () => missResolver.resolve(singleMiss()),
      check: (p) => expect((p as PlanNode).kind === 'target', 'a single-target plan'),
    },
    {
      name: 'ConfigResolver.resolve miss, fallback of 3 + retry + breaker',
      fn: () => missResolver.resolve(fallbackMiss()),
      check: (p) => expect((p as PlanNode).kind === 'fallback', 'a fallback plan'),
    },
    {
      name: 'plan run, single target, JSON (stub dispatcher)',
      fn: () => runOnce(jsonBody, false),
      check: (r) => {
        const e = r as GatewayEvent[];
        expect(e.length === 1 && e[0]!.type === 'json' && e[0]!.status === 200, 'one json event, status 200');
      },
    },
    {
      name: `plan run, single target, ${STREAM_CHUNKS}-chunk stream (stub dispatcher)`,
      fn: () => runOnce(streamBody, true),
      check: (r) => {
        const e = r as GatewayEvent[];
        expect(e[0]?.type === 'stream-start', 'the stream starts with stream-start');
        expect(e.filter((x) => x.type === 'chunk').length >= STREAM_CHUNKS, `at least ${STREAM_CHUNKS} chunks`);
      },
    },
    {
      name: 'plan run, fallback of 3 + retry + breaker, JSON (stub dispatcher)',
      fn: () => collect(runner.run(fallbackPlan, newContext('trace-micro', { endpoint: 'chat', body: jsonBody, stream: false, headers: reqHeaders }, deps.now(), '/v1/chat/completions'))),
      check: (r) => {
        const e = r as GatewayEvent[];
        expect(e.length === 1 && e[0]!.type === 'json' && e[0]!.status === 200, 'one json event, status 200');
      },
    },
    {
      name: 'hook run, request phase: input guardrail regexMatch + wordCount, deny (requestHooks stage)',
      fn: () => firstValueFrom(of(hookedContext()).pipe(inputStage)),
      check: (c) => expect(passed((c as HookedRequest).hooks, 'before'), 'one passed hook of 2 checks'),
    },
    {
      name: 'hook run, response phase: output guardrail contains + characterCount, deny, JSON answer (responseHooks stage)',
      fn: () => {
        const ctx = hookedContext();
        return collect(of(answer).pipe(outputStage(ctx))).then((events) => ({ events, ctx }));
      },
      check: (r) => {
        const { events, ctx } = r as { events: GatewayEvent[]; ctx: HookedRequest };
        expect(events.length === 1 && events[0] === answer, 'the answer passes unchanged');
        expect(passed(ctx.hooks, 'after'), 'one passed hook of 2 checks');
      },
    },
    {
      name: 'hook results: hook_results of 2 hooks (4 checks) spliced into a JSON answer and encoded as the socket write does (hookResults stage)',
      // The answer's text made into bytes, as the response's write does: a text left as a rope of
      // concatenations is flattened there, so that cost is counted here.
      fn: () => collect(of(answer).pipe(hookResults({ hooks: guardedAccount }, false))).then((events) => ({ events, bytes: events[0]?.type === 'json' ? Buffer.from(events[0].raw ?? '') : undefined })),
      check: (r) => {
        const { events, bytes } = r as { events: GatewayEvent[]; bytes: Buffer | undefined };
        const e = events[0]!;
        const spliced = e.type === 'json' && e.status === 200 && bytes ? (JSON.parse(bytes.toString()) as { hook_results?: unknown }).hook_results : undefined;
        expect(JSON.stringify(spliced) === JSON.stringify(hookResultsBody(guardedAccount)), "one 200 answer carrying exactly the account's hook_results");
      },
    },
    {
      name: 'plan run, single target + input and output guardrails (hook stages), JSON (stub dispatcher)',
      fn: () => {
        const ctx = newContext('trace-micro', { endpoint: 'chat', body: jsonBody, stream: false, headers: reqHeaders }, deps.now(), '/v1/chat/completions');
        return collect(guardedRunner.run(guardedPlan, ctx)).then((events) => ({ events, ctx }));
      },
      check: (r) => {
        const { events, ctx } = r as { events: GatewayEvent[]; ctx: { hooks?: HookAccount } };
        expect(events.length === 1 && events[0]!.type === 'json' && events[0]!.status === 200, 'one json event, status 200');
        expect(passed(ctx.hooks, 'before') && passed(ctx.hooks, 'after'), 'both guardrails ran and passed');
      },
    },
    {
      name: `SSE decode, ${STREAM_PARTS.length}-event stream (new decoder)`,
      fn: () => {
        let n = 0;
        const d = createSseDecoder(() => n++);
        for (const p of STREAM_PARTS) d.write(p);
        d.end();
        return n;
      },
      check: (n) => expect(n === STREAM_PARTS.length, `${STREAM_PARTS.length} events decoded`),
    },
    {
      name: 'SSE decode, one chunk event',
      fn: () => {
        sharedDecoder.write(oneEvent);
        return decoderEvents.n;
      },
      check: (n) => expect(n === 1, 'one event decoded'),
    },
    { name: 'SSE encode (sseData), one chunk', fn: () => sseData(CHUNK_JSON[1]!), check: (s) => expect(s === `data: ${CHUNK_JSON[1]}\n\n`, 'one data frame') },
    { name: 'SSE encode (sseData), multi-line JSON', fn: () => sseData(MULTILINE_JSON), check: (s) => expect(!(s as string).slice(0, -2).includes('\n'), 'one line') },
    ...providerCases(registry),
  ];
}

// ---------------------------------------------------------------------------------------------
// Translation cost per provider (`--only provider`): the OpenAI pass-through is the baseline

/** `provider <id>: <operation>`: the names the per-provider summary groups by. */
export const PROVIDER_CASE = /^provider (\S+): (.+)$/;
export const PROVIDER_OPS = {
  request: 'toProvider, chat request',
  answer: 'fromJson + body text, non-stream answer',
  chunk: 'fromStreamEvent, text chunk',
  decode: 'decode, one stream event',
  sign: 'prepare, SigV4 signing',
} as const;

/** One event of a stream as its framing puts it on the wire (SSE text, or one AWS event-stream frame). */
const eventStreamCodec = new EventStreamCodec(toUtf8, fromUtf8);
function bedrockFrame(ev: StreamEvent): Uint8Array {
  return eventStreamCodec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'event' },
      ':event-type': { type: 'string', value: ev.event! },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: fromUtf8(ev.data),
  });
}
const sseBytes = (ev: StreamEvent): Buffer => Buffer.from(`${ev.event === undefined ? '' : `event: ${ev.event}\n`}data: ${ev.data}\n\n`);

/**
 * Per provider (OpenAI pass-through, Anthropic, Azure OpenAI, Bedrock, Vertex AI, and Mistral, a
 * catalog host with quirks): the request translation, the non-stream answer to the bytes the client
 * gets, one text chunk of a stream, and one stream event through its framing's decoder (kept across
 * calls). Bedrock also signs (SigV4, its `prepare`).
 */
function providerCases(registry: ProviderRegistry): MicroCase[] {
  const cases: MicroCase[] = [];
  for (const id of PROVIDER_IDS) {
    const p = registry.get(id) as Provider<unknown>;
    const target = PROVIDER_TARGETS[id]!;
    const baseUrl = registry.baseUrl(p, target);
    const body = parseBody('chat', { ...PROVIDER_CHAT_REQUEST, model: PROVIDER_MODELS[id] }) as Record<string, unknown>;
    const req: ProviderRequest = { endpoint: 'chat', body, stream: false, headers: {} };
    const streamReq: ProviderRequest = { endpoint: 'chat', body: { ...body, stream: true }, stream: true, headers: {} };
    const answer = PROVIDER_ANSWERS[id]!;
    const name = (op: string): string => `provider ${id}: ${op}`;
    cases.push(
      {
        name: name(PROVIDER_OPS.request),
        fn: () => p.toProvider(req, target, baseUrl),
        check: (r) => {
          const u = r as { body?: string; method: string };
          expect(u.method === 'POST' && typeof u.body === 'string' && u.body.includes('Paris') && u.body.includes('lookup'), `${id}: a POST carrying the messages and the tool`);
        },
      },
      {
        name: name(PROVIDER_OPS.answer),
        fn: () => {
          const r = p.fromJson(req, answer, target);
          return r.raw ?? JSON.stringify(r.body);
        },
        check: (t) => {
          const b = JSON.parse(t as string) as { object?: string; choices?: { message?: { content?: string } }[]; usage?: { total_tokens?: number } };
          expect(b.object === 'chat.completion' && (b.choices?.[0]?.message?.content ?? '').includes('2.1 million') && (b.usage?.total_tokens ?? 0) > 0, `${id}: a chat.completion with the text and usage`);
        },
      },
    );
    let state = p.streamStart(streamReq, target);
    for (const ev of PROVIDER_STREAM_PRELUDE[id] ?? []) state = p.fromStreamEvent(state, ev).state;
    const chunkEvent = PROVIDER_STREAM_EVENTS[id]!;
    cases.push({
      name: name(PROVIDER_OPS.chunk),
      fn: () => p.fromStreamEvent(state, chunkEvent),
      check: (r) => {
        const c = (r as { chunks: { data: string }[] }).chunks;
        expect(c.length === 1 && (JSON.parse(c[0]!.data) as { choices: { delta: { content?: string } }[] }).choices[0]!.delta.content === ' million', `${id}: one chunk with the text`);
      },
    });
    // The decoders are the framing's, not the provider's: once per framing (SSE with and without `event:`).
    if (id === 'openai' || id === 'anthropic' || id === 'bedrock') {
      const decoded = { n: 0, last: undefined as StreamEvent | undefined };
      const onEvent = (e: StreamEvent): void => {
        decoded.n++;
        decoded.last = e;
      };
      const framed = p.descriptor.framing === 'aws-event-stream' ? bedrockFrame(chunkEvent) : sseBytes(chunkEvent);
      const decoder = p.descriptor.framing === 'aws-event-stream' ? createAwsEventStreamDecoder(onEvent) : createSseDecoder(onEvent);
      cases.push({
        name: `${name(PROVIDER_OPS.decode)} (${p.descriptor.framing === 'aws-event-stream' ? `event-stream frame, ${framed.byteLength} B` : `SSE, ${framed.byteLength} B`})`,
        fn: () => {
          decoder.write(framed);
          return decoded.n;
        },
        check: (n) => expect(n === 1 && decoded.last?.data === chunkEvent.data && decoded.last?.event === chunkEvent.event, `${id}: one event decoded whole`),
      });
      if (p.descriptor.framing === 'aws-event-stream') {
        // The same event in SSE framing: the frame decode against the SSE decode on equal content.
        const sse = sseBytes(chunkEvent);
        const sseDecoded = { n: 0 };
        const sseDecoder = createSseDecoder(() => sseDecoded.n++);
        cases.push({
          name: name(`SSE decode of the same event, for comparison (${sse.byteLength} B)`),
          fn: () => {
            sseDecoder.write(sse);
            return sseDecoded.n;
          },
          check: (n) => expect(n === 1, `${id}: one SSE event decoded`),
        });
      }
    }
    // Vertex's prepare with an access token (the fixture) returns the request as built: only Bedrock's is work.
    if (id === 'bedrock' && p.prepare) {
      const upstreamReq = p.toProvider(streamReq, target, baseUrl);
      const prepare = p.prepare.bind(p);
      const pctx = { now: () => 1_741_569_952_000, signal: new AbortController().signal };
      cases.push({
        name: name(PROVIDER_OPS.sign),
        fn: () => prepare(upstreamReq, target, pctx),
        check: (r) => expect(/^AWS4-HMAC-SHA256 Credential=/.test((r as { headers: Record<string, string> }).headers.authorization ?? ''), `${id}: a signed request`),
      });
    }
  }
  return cases;
}

/**
 * The translation cost per provider in µs, next to the OpenAI pass-through measured in the same run:
 * one row per provider, one column per operation, `+x` its difference from OpenAI's.
 */
export function providerSummary(results: readonly MicroResult[]): string[][] {
  const by = new Map<string, Map<string, number>>();
  for (const r of results) {
    const m = PROVIDER_CASE.exec(r.name);
    if (!m) continue;
    const op = m[2]!.replace(/ \(.*\)$/, '');
    if (!by.has(m[1]!)) by.set(m[1]!, new Map());
    by.get(m[1]!)!.set(op, r.nsPerCall / 1000);
  }
  if (by.size === 0) return [];
  const base = by.get('openai');
  const ops = [PROVIDER_OPS.request, PROVIDER_OPS.answer, PROVIDER_OPS.chunk, PROVIDER_OPS.decode, PROVIDER_OPS.sign];
  const cell = (id: string, op: string): string => {
    const v = by.get(id)?.get(op);
    if (v === undefined) return '-';
    const b = base?.get(op);
    return b === undefined || id === 'openai' ? v.toFixed(2) : `${v.toFixed(2)} (${v - b >= 0 ? '+' : ''}${(v - b).toFixed(2)})`;
  };
  return [['provider', 'request µs', 'non-stream answer µs', 'per stream chunk µs', 'decode per event µs', 'sign µs'], ...[...by.keys()].map((id) => [id, ...ops.map((op) => cell(id, op))])];
}

// ---------------------------------------------------------------------------------------------
// Command line

export const USAGE = `Usage: npm run bench:micro [-- options]

Times the gateway's hot functions in this process (no sockets) and prints the median ns per call.

Options:
  -h, --help          print this and exit
  --only <text>       run only the cases whose name contains <text> (case-insensitive)
  --rounds <n>        timed rounds per case (default ${DEFAULT_OPTIONS.rounds})
  --round-ms <ms>     target length of a round (default ${DEFAULT_OPTIONS.roundMs})
  --warmup-ms <ms>    warm-up per case (default ${DEFAULT_OPTIONS.warmupMs})
  --iterations <n>    fixed calls per round (and warm-up), instead of timing the warm-up (smoke tests)
  --evict-kb <n>      cold caches: before each timed call, write over an <n> KiB buffer, then time
                      that call alone; a round is ${COLD_CALLS_PER_ROUND} such calls, its figure their median
                      (49152, more than this machine's L3: every access a miss)
`;

function positiveInt(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${v}"`);
  return n;
}

/** Reads the command line: options, the case filter, or help. Throws on anything it does not know. */
export function readMicroCli(argv: string[]): { help: true } | { help: false; options: MicroOptions; only: string | undefined } {
  const { values } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      only: { type: 'string' },
      rounds: { type: 'string' },
      'round-ms': { type: 'string' },
      'warmup-ms': { type: 'string' },
      iterations: { type: 'string' },
      'evict-kb': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return { help: true };
  const options: MicroOptions = {
    rounds: positiveInt('--rounds', values.rounds, DEFAULT_OPTIONS.rounds),
    roundMs: positiveInt('--round-ms', values['round-ms'], DEFAULT_OPTIONS.roundMs),
    warmupMs: positiveInt('--warmup-ms', values['warmup-ms'], DEFAULT_OPTIONS.warmupMs),
  };
  if (values.iterations !== undefined) options.iterations = positiveInt('--iterations', values.iterations, 1);
  if (values['evict-kb'] !== undefined) options.evictKb = positiveInt('--evict-kb', values['evict-kb'], 1);
  return { help: false, options, only: values.only };
}

const fmtNs = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

/** Runs the cases (those whose name contains `only`), printing a line per case through `write`. */
export async function runMicro(o: MicroOptions, only: string | undefined, write: (s: string) => void): Promise<MicroResult[]> {
  const cases = microCases().filter((c) => !only || c.name.toLowerCase().includes(only.toLowerCase()));
  if (cases.length === 0) throw new Error(`--only "${only}" matches no case`);
  const how =
    o.evictKb !== undefined
      ? `of ${COLD_CALLS_PER_ROUND} calls, each timed alone after writing over ${o.evictKb} KiB (cold caches), after ${o.iterations !== undefined ? `${o.iterations} warm-up calls` : `${o.warmupMs} ms of warm-up`}`
      : o.iterations !== undefined
        ? `of ${o.iterations} calls`
        : `of ≈${o.roundMs} ms after ${o.warmupMs} ms of warm-up`;
  write(`Sluice micro-benchmarks: Node ${process.version}; median ns per call over ${o.rounds} rounds ${how}\n\n`);
  const width = Math.max(...cases.map((c) => c.name.length));
  write(`${'case'.padEnd(width)}  ${'ns/call'.padStart(9)}  ${'min'.padStart(9)}  ${'max'.padStart(9)}  ${'calls/round'.padStart(11)}\n`);
  const results: MicroResult[] = [];
  for (const c of cases) {
    const r = await measure(c, o);
    results.push(r);
    write(`${r.name.padEnd(width)}  ${fmtNs(r.nsPerCall).padStart(9)}  ${fmtNs(r.minNs).padStart(9)}  ${fmtNs(r.maxNs).padStart(9)}  ${String(r.callsPerRound).padStart(11)}\n`);
  }
  const summary = providerSummary(results);
  if (summary.length > 0) {
    write('\nTranslation cost per provider, µs per call (in brackets: minus the OpenAI pass-through of this run)\n');
    const widths = summary[0]!.map((_, i) => Math.max(...summary.map((row) => row[i]!.length)));
    for (const row of summary) write(`${row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}\n`);
  }
  return results;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  let cli: ReturnType<typeof readMicroCli>;
  try {
    cli = readMicroCli(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`bench:micro: ${e instanceof Error ? e.message : String(e)}\n\n${USAGE}`);
    process.exit(2);
  }
  if (cli.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  runMicro(cli.options, cli.only, (s) => void process.stdout.write(s)).then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`bench:micro failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
