/**
 * strategy.algorithm "least_latency" end to end: a gateway and two fake OpenAI upstreams, one of
 * them delayed. The assertions are on which target served (x-gateway-target and the fakes' request
 * logs), never on how long anything took.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatChunks, chatCompletion, FakeOpenAI, openAIError, sseFrames, type DefaultHandler } from '../fakes/openai-server.js';
import { chat, chatContent, parseSse, STREAM_CHAT, target } from './helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seededRandom } from '../../src/util/prng.js';

const CHAT_PATH = '/v1/chat/completions';
const SLOW_MS = 150;

let gw: TestGateway;
let slow: FakeOpenAI;
let fast: FakeOpenAI;

/** Answers "slow" (JSON or a stream) after SLOW_MS. */
const slowly: DefaultHandler = (req) =>
  req.body?.stream === true
    ? { delayMs: SLOW_MS, stream: { frames: sseFrames(chatChunks(['slow'])) } }
    : { delayMs: SLOW_MS, json: chatCompletion('slow') };

beforeAll(async () => {
  [slow, fast] = await Promise.all([FakeOpenAI.start(), FakeOpenAI.start()]);
  gw = await startGateway({ random: seededRandom(31) });
});

afterEach(() => {
  for (const f of [slow, fast]) f.reset();
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([slow, fast].map((f) => f?.close()));
});

/** A fresh config each test (a new plan, so a new latency board): `name` keeps the configs apart. */
const config = (name: string, algorithm = 'least_latency') => ({
  name,
  strategy: { mode: 'loadbalance', algorithm },
  targets: [target(slow), target(fast)],
});

describe('least_latency through the gateway', () => {
  it('after trying both, sends the traffic to the fast upstream', async () => {
    slow.setDefault(CHAT_PATH, slowly);
    const cfg = config('json');
    const served: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await chat(gw, cfg);
      expect(r.status).toBe(200);
      served.push(r.headers['x-gateway-target'] as string);
    }
    // Each target is tried once (a target without samples is preferred), then the fast one serves.
    expect(new Set(served.slice(0, 2))).toEqual(new Set(['config.targets[0]', 'config.targets[1]']));
    expect(served.slice(2).every((t) => t === 'config.targets[1]')).toBe(true);
    expect(slow.requests).toHaveLength(1);
    expect(fast.requests).toHaveLength(19);
  });

  it('streams are measured to their first content: the fast stream takes the traffic', async () => {
    slow.setDefault(CHAT_PATH, slowly);
    const cfg = config('stream');
    const served: string[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await chat(gw, cfg, { body: STREAM_CHAT });
      expect(r.status).toBe(200);
      expect(chatContent(parseSse(r.text))).toBe(r.headers['x-gateway-target'] === 'config.targets[0]' ? 'slow' : 'Hello');
      served.push(r.headers['x-gateway-target'] as string);
    }
    expect(served.slice(2).every((t) => t === 'config.targets[1]')).toBe(true);
    expect(slow.requests).toHaveLength(1);
  });

  it('a target that fails fast does not look fast: its 503s count as slow samples', async () => {
    slow.setDefault(CHAT_PATH, slowly);
    fast.setDefault(CHAT_PATH, openAIError(503, 'overloaded'));
    const cfg = config('failing');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await chat(gw, cfg)).status);
    // Each is tried once (one 503 reaches the client: a loadbalance does not retry), then only the slow one serves.
    expect(fast.requests).toHaveLength(1);
    expect(slow.requests).toHaveLength(11);
    expect(statuses.filter((s) => s === 503)).toHaveLength(1);
  });

  it('the weighted default keeps sending the slow upstream its share', async () => {
    slow.setDefault(CHAT_PATH, slowly);
    for (let i = 0; i < 20; i++) expect((await chat(gw, config('weighted', 'weighted'))).status).toBe(200);
    // Weighted random [1, 1] over 20 requests: the slow one gets some (the seeded draw gives several).
    expect(slow.requests.length).toBeGreaterThan(3);
  });

  it.each([
    ['an unknown algorithm', { strategy: { mode: 'loadbalance', algorithm: 'fastest' } }],
    ['algorithm beside fallback', { strategy: { mode: 'fallback', algorithm: 'least_latency' } }],
  ])('%s is a 400 naming strategy.algorithm', async (_name, cfg) => {
    const r = await chat(gw, { ...cfg, targets: [target(slow), target(fast)] });
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('config.strategy.algorithm');
    expect(slow.requests.length + fast.requests.length).toBe(0);
  });
});
