/**
 * Mixed load for the live dashboard test (not a test file itself): an in-process gateway whose state
 * is in a Redis of its own (a throw-away redis-server on a spare port), fake OpenAI providers with
 * faults, and workers that send, over and over, every kind of request the dashboards chart:
 *
 * - streams and plain answers from a healthy target (TTFT, tokens, cost);
 * - a fallback over a target behind a circuit breaker that starts answering 500 a few seconds in (its
 *   circuit opens and stays open), one answering 429 with a retry, and one too slow for its
 *   `request_timeout`, to the healthy one;
 * - a target that always answers 502 (the client gets it), slow streams, and streams cut mid-way;
 * - simple-cache HITs and semantic SEMANTIC_HITs;
 * - input guardrails passing, failing without deny (246) and denying (446);
 * - a usage-limit policy per user (a gateway key in a workspace) that alerts, then refuses (412);
 * - and Redis stopped (SIGSTOP) for a moment while all that goes on, so store operations fail.
 *
 * Every answer's status is tallied per scenario, so the test can check the load did what it says.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { FakeOpenAI, chatChunks, chatWithUsage, openAIError, sseFrames } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { post, type Answer } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const LIMITED_KEY = 'sk-test-live-dashboards-limited-0123456789';
/** Per user: 20 tokens an answer against 30: the first answer alerts (≥ 10), the third is refused. */
const BOOTSTRAP = `
api_keys:
  - { key: ${LIMITED_KEY}, name: live-limited, workspace_id: ws-live }
usage_limits:
  - name: Live per-user tokens
    type: tokens
    workspace_id: ws-live
    credit_limit: 30
    alert_threshold: 10
    group_by: [{ key: metadata._user }]
`;

interface Fakes {
  healthy: FakeOpenAI;
  failing: FakeOpenAI;
  throttled: FakeOpenAI;
  slow: FakeOpenAI;
  cutting: FakeOpenAI;
  metered: FakeOpenAI;
  broken: FakeOpenAI;
}

async function startFakes(): Promise<Fakes> {
  const [healthy, failing, throttled, slow, cutting, metered, broken] = await Promise.all(Array.from({ length: 7 }, () => FakeOpenAI.start()));
  broken!.setDefault('/v1/chat/completions', openAIError(502, 'bad gateway'));
  throttled!.setDefault('/v1/chat/completions', openAIError(429, 'slow down'));
  // Too slow for a 150 ms request_timeout when asked for a whole answer; a paced stream otherwise.
  slow!.setDefault('/v1/chat/completions', (req) =>
    req.body?.stream === true ? { stream: { frames: sseFrames(chatChunks(['one ', 'two ', 'three'], { model: 'gpt-4o-mini' })), gapMs: 40 } } : { delayMs: 400, json: {} },
  );
  cutting!.setDefault('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['cut ', 'here ', 'never'], { model: 'gpt-4o-mini' })), cutAfter: 1 } });
  metered!.setDefault('/v1/chat/completions', chatWithUsage({ prompt_tokens: 5, completion_tokens: 15 }));
  return { healthy: healthy!, failing: failing!, throttled: throttled!, slow: slow!, cutting: cutting!, metered: metered!, broken: broken! };
}

type Scenario = (gw: TestGateway, f: Fakes) => Promise<Answer[]>;

const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });
const target = (f: FakeOpenAI, extra: Record<string, unknown> = {}) => ({ provider: 'openai', custom_host: f.baseUrl, api_key: 'sk-provider-live', ...extra });
const send = (gw: TestGateway, config: unknown, body: unknown, headers: Record<string, string> = {}) =>
  post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': JSON.stringify(config), ...headers }), body);

/** When the target behind the circuit breaker starts failing, from the start of the load. */
const FAILING_AFTER_MS = 3000;

const LONG = 'Explain how a hash map resolves collisions with open addressing and with separate chaining in detail';
const CARD = '4111 1111 1111 1111';

/** What the workers send, by name; each call returns the answers it got. */
const SCENARIOS: Record<string, Scenario> = {
  healthy: async (gw, f) => [await send(gw, target(f.healthy, { name: 'healthy' }), chat(`hello ${randomUUID()}`))],
  stream: async (gw, f) => [await send(gw, target(f.healthy, { name: 'healthy' }), chat('stream please', { stream: true }))],
  fallback: async (gw, f) => {
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        target(f.failing, { name: 'failing', cb_config: { failure_threshold: 2, cooldown_interval: 30_000 } }),
        target(f.throttled, { name: 'throttled', retry: { attempts: 1, on_status_codes: [429] } }),
        target(f.slow, { name: 'slow', request_timeout: 150 }),
        target(f.healthy, { name: 'healthy' }),
      ],
    };
    return [await send(gw, config, chat(`fall back ${randomUUID()}`))];
  },
  broken: async (gw, f) => [await send(gw, target(f.broken, { name: 'broken' }), chat('this fails'))],
  slowStream: async (gw, f) => [await send(gw, target(f.slow, { name: 'slow' }), chat('pace it', { stream: true }))],
  cutStream: async (gw, f) => [await send(gw, target(f.cutting, { name: 'cutting' }), chat('cut it', { stream: true }))],
  cache: async (gw, f) => {
    const ns = { 'x-gateway-cache-namespace': `live-${randomUUID()}` };
    const simple = { ...target(f.healthy), cache: { mode: 'simple', max_age: 600 } };
    const semantic = { ...target(f.healthy), cache: { mode: 'semantic', max_age: 600 } };
    return [
      await send(gw, simple, chat('What is the capital of France?'), ns),
      await send(gw, simple, chat('What is the capital of France?'), ns),
      await send(gw, semantic, chat(LONG), ns),
      await send(gw, semantic, chat(`${LONG} please`), ns),
    ];
  },
  guardrails: async (gw, f) => {
    const config = {
      ...target(f.healthy, { name: 'guarded' }),
      input_guardrails: [
        { id: 'no-cards', 'default.regexMatch': { rule: '\\d{4} \\d{4} \\d{4} \\d{4}', not: true }, deny: true },
        { id: 'long-enough', 'default.wordCount': { minWords: 3, maxWords: 100 } },
      ],
    };
    return [await send(gw, config, chat('a request that passes')), await send(gw, config, chat('short')), await send(gw, config, chat(`my card is ${CARD}`))];
  },
  limits: async (gw, f) => {
    const headers = { 'x-gateway-api-key': LIMITED_KEY, 'x-gateway-metadata': JSON.stringify({ _user: randomUUID() }) };
    const config = target(f.metered, { name: 'metered' });
    const out: Answer[] = [];
    for (let i = 0; i < 3; i++) out.push(await send(gw, config, chat('hi', { max_tokens: 10 }), headers));
    return out;
  },
};

export interface LiveStack {
  gw: TestGateway;
  redis: RedisServer;
  /** Status (and cache status) counts per scenario: `{ cache: { '200 HIT': 3, ... } }`. */
  tally: Record<string, Record<string, number>>;
  /** Runs `workers` loops over every scenario for `ms`, with Redis stopped from `pause.at` ms in for `pause.ms`. */
  drive(ms: number, workers: number, pause: { at: number; ms: number }): Promise<void>;
  close(): Promise<void>;
}

export async function startLiveStack(): Promise<LiveStack> {
  const [redis, fakes] = await Promise.all([startRedisServer(), startFakes()]);
  const peek = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  peek.on('error', () => undefined);
  await peek.connect();
  const pid = Number(/process_id:(\d+)/.exec(await peek.info('server'))![1]);
  peek.disconnect();
  const gw = await startGateway({ options: { redis: redis.url }, bootstrapYaml: BOOTSTRAP });
  const tally: LiveStack['tally'] = {};
  // An exchange that fails on the client's side (a stream cut before its end) is tallied by its error.
  const record = (name: string, answers: Answer[] | Error) => {
    const t = (tally[name] ??= {});
    const keys = answers instanceof Error ? [`client error ${answers.message}`] : answers.map((a) => (a.cacheStatus && a.cacheStatus !== 'DISABLED' ? `${a.status} ${a.cacheStatus}` : String(a.status)));
    for (const k of keys) t[k] = (t[k] ?? 0) + 1;
  };
  const loop = async (deadline: number, offset: number) => {
    const names = Object.keys(SCENARIOS);
    for (let i = offset; Date.now() < deadline; i++) {
      const name = names[i % names.length]!;
      record(name, await SCENARIOS[name]!(gw, fakes).catch((e: Error) => e));
    }
  };
  const drive: LiveStack['drive'] = async (ms, workers, pause) => {
    const deadline = Date.now() + ms;
    // Healthy for the first scrapes (the circuit's series are there at 0), then down.
    const down = setTimeout(() => fakes.failing.setDefault('/v1/chat/completions', openAIError(500, 'the upstream is down')), FAILING_AFTER_MS);
    const stopped = new Promise<void>((resolve) =>
      setTimeout(() => {
        process.kill(pid, 'SIGSTOP');
        setTimeout(() => (process.kill(pid, 'SIGCONT'), resolve()), pause.ms);
      }, pause.at),
    );
    await Promise.all([...Array.from({ length: workers }, (_, w) => loop(deadline, w)), stopped]).finally(() => clearTimeout(down));
  };
  const close = async () => {
    await gw.close();
    await Promise.all([...Object.values(fakes).map((f) => f.close()), redis.close()]);
  };
  return { gw, redis, tally, drive, close };
}
