/**
 * Routing strategies end to end: real sockets, one FakeOpenAI per upstream target.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatChunks, FakeOpenAI, openAIError, sseFrames } from '../fakes/openai-server.js';
import { chat, chatContent, parseSse, STREAM_CHAT, target } from './helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const CHAT_PATH = '/v1/chat/completions';

let gw: TestGateway;
let a: FakeOpenAI;
let b: FakeOpenAI;
let c: FakeOpenAI;
let d: FakeOpenAI;
/** The gateway's random source; tests may replace it, afterEach restores Math.random. */
let rnd: () => number = Math.random;

beforeAll(async () => {
  [a, b, c, d] = await Promise.all([FakeOpenAI.start(), FakeOpenAI.start(), FakeOpenAI.start(), FakeOpenAI.start()]);
  gw = await startGateway({ random: () => rnd() });
});

afterEach(() => {
  rnd = Math.random;
  for (const f of [a, b, c, d]) f.reset();
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([a, b, c, d].map((f) => f?.close()));
});

/** Run `n` requests, `width` at a time. */
async function many<T>(n: number, width: number, one: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += width) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, one))));
  }
  return out;
}

describe('fallback', () => {
  it('a 503 from the first target falls over to the second, which answers', async () => {
    a.enqueue(CHAT_PATH, openAIError(503, 'first is down'));
    const r = await chat(gw, { strategy: { mode: 'fallback' }, targets: [target(a), target(b)] });
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe('echo: hi');
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect(r.headers['x-gateway-provider']).toBe('openai');
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(1);
  });

  it('the first target answering means the second is never called', async () => {
    const r = await chat(gw, { strategy: { mode: 'fallback' }, targets: [target(a), target(b)] });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[0]');
    expect(b.requests).toHaveLength(0);
  });

  it('on_status_codes [503]: a 400 does not fall over and is returned as is', async () => {
    a.enqueue(CHAT_PATH, openAIError(400, 'bad thing in the request'));
    const r = await chat(gw, { strategy: { mode: 'fallback', on_status_codes: [503] }, targets: [target(a), target(b)] });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain('bad thing in the request');
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(0);
  });

  it('on_status_codes [503]: a 503 still falls over', async () => {
    a.enqueue(CHAT_PATH, openAIError(503, 'down'));
    const r = await chat(gw, { strategy: { mode: 'fallback', on_status_codes: [503] }, targets: [target(a), target(b)] });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
  });

  it('when every target fails, the last target’s status and message are returned', async () => {
    a.enqueue(CHAT_PATH, openAIError(503, 'first is down'));
    b.enqueue(CHAT_PATH, openAIError(500, 'second broke'));
    c.enqueue(CHAT_PATH, openAIError(429, 'third is busy'));
    const r = await chat(gw, { strategy: { mode: 'fallback' }, targets: [target(a), target(b), target(c)] });
    expect(r.status).toBe(429);
    expect(r.json.error.message).toContain('third is busy');
    expect(r.json.error.message).not.toContain('first');
    expect([a, b, c].map((f) => f.requests.length)).toEqual([1, 1, 1]);
  });
});

describe('loadbalance', () => {
  it('weights [1, 0]: the weight-0 target never receives a request in 50', async () => {
    const cfg = { strategy: { mode: 'loadbalance' }, targets: [target(a, { weight: 1 }), target(b, { weight: 0 })] };
    const rs = await many(50, 10, () => chat(gw, cfg));
    expect(rs.every((r) => r.status === 200 && r.headers['x-gateway-target'] === 'config.targets[0]')).toBe(true);
    expect(a.requests).toHaveLength(50);
    expect(b.requests).toHaveLength(0);
  });

  it('weights [1, 3] with an injected random split exactly 100 / 300 over 400 evenly spread draws', async () => {
    let k = 0;
    rnd = () => (k++ + 0.5) / 400;
    const cfg = { strategy: { mode: 'loadbalance' }, targets: [target(a, { weight: 1 }), target(b, { weight: 3 })] };
    const rs = await many(400, 20, () => chat(gw, cfg));
    expect(rs.every((r) => r.status === 200)).toBe(true);
    expect(a.requests).toHaveLength(100);
    expect(b.requests).toHaveLength(300);
    const byHeader = rs.filter((r) => r.headers['x-gateway-target'] === 'config.targets[1]').length;
    expect(byHeader).toBe(300);
  });

  it('weights [1, 3] with Math.random land near 1:3 over 400 requests (wide tolerance)', async () => {
    const cfg = { strategy: { mode: 'loadbalance' }, targets: [target(a, { weight: 1 }), target(b, { weight: 3 })] };
    await many(400, 20, () => chat(gw, cfg));
    expect(a.requests.length + b.requests.length).toBe(400);
    // Expected 100 (σ ≈ 8.7): ±50 is beyond 5σ.
    expect(a.requests.length).toBeGreaterThan(50);
    expect(a.requests.length).toBeLessThan(150);
  });

  it('a target left without weight has the default weight 1', async () => {
    let k = 0;
    rnd = () => (k++ + 0.5) / 100;
    const cfg = { strategy: { mode: 'loadbalance' }, targets: [target(a), target(b)] };
    await many(100, 20, () => chat(gw, cfg));
    expect(a.requests).toHaveLength(50);
    expect(b.requests).toHaveLength(50);
  });
});

describe('conditional', () => {
  const cfg = (conds?: unknown[]) => ({
    strategy: {
      mode: 'conditional',
      conditions: conds ?? [
        { query: { 'metadata.plan': { $eq: 'paid' } }, then: 'paid' },
        { query: { 'params.model': { $in: ['gpt-4o', 'o1'] } }, then: 'big' },
      ],
      default: 'free',
    },
    targets: [target(a, { name: 'free' }), target(b, { name: 'paid' }), target(c, { name: 'big' })],
  });

  it('metadata plan=paid routes to the target named "paid"', async () => {
    const r = await chat(gw, cfg(), { headers: { 'x-gateway-metadata': JSON.stringify({ plan: 'paid' }) } });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect([a, b, c].map((f) => f.requests.length)).toEqual([0, 1, 0]);
  });

  it('params.model $in routes to the target named "big"', async () => {
    const r = await chat(gw, cfg(), { body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[2]');
    expect(c.requests[0]!.body.model).toBe('gpt-4o');
    expect([a, b, c].map((f) => f.requests.length)).toEqual([0, 0, 1]);
  });

  it('the first matching condition wins', async () => {
    const r = await chat(gw, cfg(), {
      headers: { 'x-gateway-metadata': JSON.stringify({ plan: 'paid' }) },
      body: { model: 'o1', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
  });

  it('nothing matching goes to default', async () => {
    const r = await chat(gw, cfg(), { headers: { 'x-gateway-metadata': JSON.stringify({ plan: 'free' }) } });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[0]');
    expect([a, b, c].map((f) => f.requests.length)).toEqual([1, 0, 0]);
  });

  it('a condition naming a missing target is 400 unknown_target and no upstream is called', async () => {
    const r = await chat(gw, cfg([{ query: { 'metadata.plan': { $eq: 'paid' } }, then: 'nope' }]));
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('unknown_target');
    expect(r.json.error.message).toContain('nope');
    expect([a, b, c].map((f) => f.requests.length)).toEqual([0, 0, 0]);
  });
});

describe('nested configs', () => {
  it('a fallback of loadbalances: the first loadbalance failing moves to the second', async () => {
    a.setDefault(CHAT_PATH, openAIError(503, 'a down'));
    b.setDefault(CHAT_PATH, openAIError(503, 'b down'));
    const r = await chat(gw, {
      strategy: { mode: 'fallback' },
      targets: [
        { strategy: { mode: 'loadbalance' }, targets: [target(a), target(b)] },
        { strategy: { mode: 'loadbalance' }, targets: [target(c), target(d, { weight: 0 })] },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1].targets[0]');
    expect(a.requests.length + b.requests.length).toBe(1);
    expect(c.requests).toHaveLength(1);
    expect(d.requests).toHaveLength(0);
  });

  it('a conditional into a fallback: the named fallback node is chosen and falls over inside', async () => {
    a.enqueue(CHAT_PATH, openAIError(503, 'a down'));
    const r = await chat(
      gw,
      {
        strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.plan': { $eq: 'paid' } }, then: 'paid' }], default: 'free' },
        targets: [target(d, { name: 'free' }), { name: 'paid', strategy: { mode: 'fallback' }, targets: [target(a), target(b)] }],
      },
      { headers: { 'x-gateway-metadata': JSON.stringify({ plan: 'paid' }) } },
    );
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1].targets[1]');
    expect([a, b, d].map((f) => f.requests.length)).toEqual([1, 1, 0]);
  });

  it('a race inside a fallback: when every contender fails the fallback moves on', async () => {
    a.enqueue(CHAT_PATH, openAIError(503, 'a down'));
    b.enqueue(CHAT_PATH, openAIError(502, 'b down'));
    const r = await chat(gw, {
      strategy: { mode: 'fallback' },
      targets: [{ strategy: { mode: 'race', hedge_after_ms: 0 }, targets: [target(a), target(b)] }, target(c)],
    });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect([a, b, c].map((f) => f.requests.length)).toEqual([1, 1, 1]);
  });

  it('a race inside a fallback: a winning contender answers and the fallback stops there', async () => {
    a.enqueue(CHAT_PATH, { delayMs: 2000, json: { never: 'used' } });
    const r = await chat(gw, {
      strategy: { mode: 'fallback' },
      targets: [{ strategy: { mode: 'race', hedge_after_ms: 50 }, targets: [target(a), target(b)] }, target(c)],
    });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[0].targets[1]');
    expect(c.requests).toHaveLength(0);
    await a.requests[0]!.closed;
    expect(a.requests[0]!.aborted).toBe(true);
  });
});

describe('race', () => {
  const raceCfg = (hedge = 50) => ({ strategy: { mode: 'race', hedge_after_ms: hedge }, targets: [target(a), target(b)] });

  it('a slow first target loses to a fast second, and its upstream request is aborted', async () => {
    a.enqueue(CHAT_PATH, { delayMs: 2000, json: { never: 'used' } });
    const r = await chat(gw, raceCfg());
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe('echo: hi');
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(1);
    await a.requests[0]!.closed;
    expect(a.requests[0]!.aborted).toBe(true);
    expect(b.requests[0]!.aborted).toBe(false);
  });

  it('a contender that fails does not fail the race', async () => {
    a.enqueue(CHAT_PATH, openAIError(503, 'a down'));
    const r = await chat(gw, raceCfg());
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(1);
  });

  it('a contender failing while another is in flight does not fail the race either', async () => {
    a.enqueue(CHAT_PATH, { ...openAIError(500, 'a broke'), delayMs: 20 });
    b.enqueue(CHAT_PATH, { delayMs: 60, json: { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [] } });
    const r = await chat(gw, raceCfg(0));
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
  });

  it('when every contender fails, the last failure is the answer', async () => {
    a.enqueue(CHAT_PATH, openAIError(503, 'a down'));
    b.enqueue(CHAT_PATH, openAIError(429, 'b busy'));
    // A long hedge: b starts only once a has failed, so b's error is last.
    const r = await chat(gw, raceCfg(60_000));
    expect(r.status).toBe(429);
    expect(r.json.error.message).toContain('b busy');
    expect([a, b].map((f) => f.requests.length)).toEqual([1, 1]);
  });

  it('the first target answering before the hedge means the second is never called', async () => {
    const r = await chat(gw, raceCfg(60_000));
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[0]');
    expect(b.requests).toHaveLength(0);
  });
});

describe('streams through a fallback', () => {
  const cfg = () => ({ strategy: { mode: 'fallback' }, targets: [target(a), target(b)] });

  it('a 503 before the first chunk falls over; the client gets a clean stream from the second target', async () => {
    a.enqueue(CHAT_PATH, openAIError(503, 'a down'));
    const r = await chat(gw, cfg(), { body: STREAM_CHAT });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    const frames = parseSse(r.text);
    expect(frames.some((f) => f.event === 'error')).toBe(false);
    expect(frames.at(-1)!.data).toBe('[DONE]');
    expect(chatContent(frames)).toBe('Hello');
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(1);
  });

  it('a failure after the first chunk does not fall over: the client sees an SSE error event, the second target nothing', async () => {
    // role chunk, "Hel", then the socket is cut.
    a.enqueue(CHAT_PATH, { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'])), cutAfter: 2 } });
    const r = await chat(gw, cfg(), { body: STREAM_CHAT });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[0]');
    const frames = parseSse(r.text);
    expect(chatContent(frames)).toBe('Hel');
    expect(frames.some((f) => f.data === '[DONE]')).toBe(false);
    const last = frames.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data).error).toBeDefined();
    expect(b.requests).toHaveLength(0);
  });
});
