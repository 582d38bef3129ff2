/**
 * Guardrails and hooks end to end: real HTTP through the gateway to a fake OpenAI on port 0.
 * Deny before the call (upstream never called), output deny (446, the answer not leaked), 246 with
 * hook_results, a mutator whose change reaches the upstream, fallback and retry on 446, streams in
 * both modes (held with deny, flowing without), async hooks recorded after the answer.
 */
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeOpenAI, chatCompletion, chatChunks, sseFrames } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';

const PROVIDER_KEY = 'sk-provider-secret-hooks';
const CARD = '4111 1111 1111 1111';

let fake: FakeOpenAI;
let other: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  [fake, other] = await Promise.all([FakeOpenAI.start(), FakeOpenAI.start()]);
  gw = await startGateway();
});
afterEach(() => {
  fake.reset();
  other.reset();
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([fake?.close(), other?.close()]);
});

const target = (f: FakeOpenAI, extra: Record<string, unknown> = {}) => ({ provider: 'openai', custom_host: f.baseUrl, api_key: PROVIDER_KEY, ...extra });
const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });
const send = (config: unknown, body: unknown) => post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': JSON.stringify(config) }), body);

describe('input guardrails and before hooks', () => {
  it('a deny before the request is a 446 with hook_results; the provider is never called and nothing is cached', async () => {
    const config = {
      ...target(fake),
      cache: { mode: 'simple' },
      input_guardrails: [{ id: 'no-cards', 'default.regexMatch': { rule: '\\d{4} \\d{4} \\d{4} \\d{4}', not: true }, deny: true }],
    };
    const r = await send(config, chat(`my card is ${CARD}`));
    expect(r.status).toBe(446);
    expect(r.json.error.type).toBe('hooks_failed');
    expect(r.json.hook_results.before_request_hooks[0]).toMatchObject({ id: 'no-cards', verdict: false, deny: true });
    expect(r.json.hook_results.before_request_hooks[0].checks[0]).toMatchObject({ id: 'default.regexMatch', verdict: false });
    expect(JSON.stringify(r.json)).not.toContain(CARD);
    expect(fake.requests).toHaveLength(0);
    const again = await send(config, chat(`my card is ${CARD}`));
    expect(again.status).toBe(446);
    expect(fake.requests).toHaveLength(0);
  });

  it('padding does not get past a pattern guardrail: a greedy rule matching across character 4,096 or at the end of a long text denies, and is redacted whole', async () => {
    const deny = { ...target(fake), input_guardrails: [{ id: 'no-secrets', 'default.regexMatch': { rule: 'secret.*', not: true }, deny: true }] };
    for (const text of ['x'.repeat(4093) + 'secret=hunter2' + 'y'.repeat(9000), 'x'.repeat(12_000) + 'secret=hunter2']) {
      const r = await send(deny, chat(text));
      expect(r.status).toBe(446);
      expect(r.json.hook_results.before_request_hooks[0].checks[0]).toMatchObject({ id: 'default.regexMatch', verdict: false, error: null });
    }
    expect(fake.requests).toHaveLength(0);
    const redact = { ...target(fake), before_request_hooks: [{ id: 'redact', type: 'mutator', checks: [{ id: 'default.regexReplace', parameters: { rule: 'secret.*', redactText: '[R]' } }] }] };
    const r = await send(redact, chat('x'.repeat(4093) + 'secret=hunter2' + 'y'.repeat(9000)));
    expect(r.status).toBe(200);
    expect(fake.requests[0]!.body.messages.at(-1).content).toBe('x'.repeat(4093) + '[R]');
  });

  it('a passing request goes through with hook_results in the body', async () => {
    const config = { ...target(fake), input_guardrails: [{ id: 'no-cards', 'default.regexMatch': { rule: '\\d{4} \\d{4}', not: true }, deny: true }] };
    const r = await send(config, chat('hello there'));
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe('echo: hello there');
    expect(r.json.hook_results.before_request_hooks[0]).toMatchObject({ id: 'no-cards', verdict: true, deny: false });
    expect(fake.requests).toHaveLength(1);
  });

  it('a failed check without deny answers 246 with the body and hook_results', async () => {
    const config = { ...target(fake), input_guardrails: [{ id: 'long-enough', 'default.wordCount': { minWords: 5, maxWords: 100 } }] };
    const r = await send(config, chat('too short'));
    expect(r.status).toBe(246);
    expect(r.json.choices[0].message.content).toBe('echo: too short');
    expect(r.json.hook_results.before_request_hooks[0]).toMatchObject({ id: 'long-enough', verdict: false, deny: false });
  });

  it('a mutator changes the request the provider receives', async () => {
    const config = {
      ...target(fake),
      before_request_hooks: [{ id: 'prefix', type: 'mutator', checks: [{ id: 'default.addPrefix', parameters: { prefix: 'Answer in French. ', applyToRole: 'user' } }] }],
    };
    const r = await send(config, chat('hello'));
    expect(r.status).toBe(200);
    expect(fake.requests[0]!.body.messages.at(-1).content).toBe('Answer in French. hello');
    expect(r.json.hook_results.before_request_hooks[0]).toMatchObject({ id: 'prefix', transformed: true });
  });

  it('an unknown check id is a 400 naming the path, at config validation', async () => {
    const r = await send({ ...target(fake), input_guardrails: [{ 'default.noSuchCheck': {} }] }, chat('x'));
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_config');
    expect(r.json.error.param).toContain('input_guardrails[0]');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('output guardrails and after hooks', () => {
  const denyCards = [{ id: 'no-cards-out', 'default.contains': { words: ['1111'], operator: 'none' }, deny: true }];

  it('an output deny is a 446 and the answer is not sent, not even in a check’s data', async () => {
    fake.enqueue('/v1/chat/completions', { json: chatCompletion(`your card: ${CARD}`) });
    const r = await send({ ...target(fake), output_guardrails: denyCards }, chat('what is my card?'));
    expect(r.status).toBe(446);
    expect(r.text).not.toContain(CARD);
    expect(r.text).not.toContain('your card');
    expect(r.json.hook_results.after_request_hooks[0]).toMatchObject({ id: 'no-cards-out', verdict: false, deny: true });
  });

  it('a webhook whose reply quotes the denied answer: its data is left out of the 446', async () => {
    const { createServer } = await import('node:http');
    const hook = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ verdict: false, data: { quoted: JSON.parse(body).response?.text ?? body } }));
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(hook.address() as { port: number }).port}/check`;
    try {
      fake.enqueue('/v1/chat/completions', { json: chatCompletion(`your card: ${CARD}`) });
      const config = { ...target(fake), output_guardrails: [{ id: 'remote', 'default.webhook': { webhookURL: url }, deny: true }] };
      const r = await send(config, chat('card?'));
      expect(r.status).toBe(446);
      expect(r.json.hook_results.after_request_hooks[0].checks[0]).toMatchObject({ id: 'default.webhook', verdict: false, data: null });
      expect(r.text).not.toContain(CARD);
    } finally {
      await new Promise<void>((r) => hook.close(() => r()));
    }
  });

  it('fallback moves to the next target when an answer is denied (446 is non-2xx)', async () => {
    fake.enqueue('/v1/chat/completions', { json: chatCompletion(`your card: ${CARD}`) });
    const config = { strategy: { mode: 'fallback' }, output_guardrails: denyCards, targets: [target(fake), target(other)] };
    const r = await send(config, chat('hi'));
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect(r.json.choices[0].message.content).toBe('echo: hi');
    const after = r.json.hook_results.after_request_hooks;
    expect(after.map((h: { verdict: boolean; target: string }) => [h.target, h.verdict])).toEqual([
      ['config.targets[0]', false],
      ['config.targets[1]', true],
    ]);
  });

  it('retry with on_status_codes [446] retries a denied answer', async () => {
    fake.enqueue('/v1/chat/completions', { json: chatCompletion(`your card: ${CARD}`) });
    const config = { ...target(fake), retry: { attempts: 1, on_status_codes: [446] }, output_guardrails: denyCards };
    const r = await send(config, chat('again'));
    expect(r.status).toBe(200);
    expect(fake.requests).toHaveLength(2);
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('1');
  });

  it('async after hooks run after the answer without changing it, and are logged', async () => {
    const config = {
      ...target(fake),
      after_request_hooks: [{ id: 'audit', async: true, checks: [{ id: 'default.characterCount', parameters: { minCharacters: 1000 } }], on_fail: { feedback: { value: -1, weight: 1 } } }],
    };
    const trace = `t-async-${Date.now()}`;
    const r = await post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': JSON.stringify(config), 'x-gateway-trace-id': trace }), chat('short'));
    expect(r.status).toBe(200);
    expect(r.json.hook_results).toBeUndefined();
    const line = await vi.waitFor(
      () => {
        const l = gw.logs.find((x) => x.msg === 'async hooks' && x.trace_id === trace);
        if (!l) throw new Error('not yet');
        return l;
      },
      { timeout: 5000, interval: 10 },
    );
    expect(line.hooks).toEqual([{ id: 'audit', list: 'after_request_hooks', verdict: false, feedback: { value: -1, weight: 1 } }]);
  });
});

describe('streams', () => {
  const sdk = (config: unknown): OpenAI =>
    new OpenAI({
      apiKey: PROVIDER_KEY,
      baseURL: `${gw.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gw.key, 'x-gateway-config': JSON.stringify(config) },
    });

  it('with a deny: the stream is held and checked whole; a bad answer is a 446 before any byte', async () => {
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['your card: ', CARD])) } });
    const config = { ...target(fake), output_guardrails: [{ id: 'no-cards-out', 'default.contains': { words: ['1111'], operator: 'none' }, deny: true }] };
    const r = await send(config, chat('card?', { stream: true }));
    expect(r.status).toBe(446);
    expect(r.headers['content-type']).toContain('application/json');
    expect(r.text).not.toContain(CARD);
    expect(r.text).not.toContain('your card');
  });

  it('with a deny: a good answer is replayed whole through the openai SDK', async () => {
    const config = { ...target(fake), output_guardrails: [{ id: 'no-cards-out', 'default.contains': { words: ['1111'], operator: 'none' }, deny: true }] };
    const stream = await sdk(config).chat.completions.create({ ...chat('replay me'), stream: true } as never);
    let text = '';
    for await (const c of stream as unknown as AsyncIterable<{ choices: { delta?: { content?: string } }[] }>) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello'); // the fake's stream: 'Hel', 'lo'
  });

  it('without a deny: chunks flow and the results close the stream in a comment the SDK ignores', async () => {
    const config = { ...target(fake), output_guardrails: [{ id: 'size', 'default.characterCount': { minCharacters: 1, maxCharacters: 3 } }] };
    const raw = await send(config, chat('flowing', { stream: true }));
    expect(raw.status).toBe(200);
    expect(raw.text).toMatch(/: hook_results \{.*"id":"size".*"verdict":false/);
    expect(raw.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const stream = await sdk(config).chat.completions.create({ ...chat('flowing'), stream: true } as never);
    let text = '';
    for await (const c of stream as unknown as AsyncIterable<{ choices: { delta?: { content?: string } }[] }>) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello');
  });
});

describe('hooks and the cache', () => {
  it('a cache hit still carries the hook_results of the input guardrails that ran on it', async () => {
    const config = { ...target(fake), cache: { mode: 'simple' }, input_guardrails: [{ id: 'words', 'default.wordCount': { minWords: 1, maxWords: 100 }, deny: true }] };
    const body = chat('cache me with hooks');
    const miss = await send(config, body);
    const hit = await send(config, body);
    expect(miss.headers['x-gateway-cache-status']).toBe('MISS');
    expect(hit.headers['x-gateway-cache-status']).toBe('HIT');
    expect(fake.requests).toHaveLength(1);
    expect(hit.status).toBe(200);
    expect(hit.json.choices[0].message.content).toBe(miss.json.choices[0].message.content);
    expect(hit.json.hook_results.before_request_hooks[0]).toMatchObject({ id: 'words', verdict: true });
    expect(hit.json.hook_results.after_request_hooks).toEqual([]);
  });

  it('an answer that failed an output check (246) is not cached: the next request asks again and is 246 again', async () => {
    const config = { ...target(fake), cache: { mode: 'simple' }, output_guardrails: [{ id: 'long', 'default.characterCount': { minCharacters: 1000 } }] };
    const body = chat('short answer please');
    const first = await send(config, body);
    const second = await send(config, body);
    expect(first.status).toBe(246);
    expect(second.status).toBe(246);
    expect(second.headers['x-gateway-cache-status']).toBe('MISS');
    expect(second.json.hook_results.after_request_hooks[0]).toMatchObject({ id: 'long', verdict: false });
    expect(fake.requests).toHaveLength(2);
  });

  it('a streamed answer that failed an output check is not cached either', async () => {
    const config = { ...target(fake), cache: { mode: 'simple' }, output_guardrails: [{ id: 'long', 'default.characterCount': { minCharacters: 1000 } }] };
    const body = chat('short stream please', { stream: true });
    const first = await send(config, body);
    const second = await send(config, body);
    expect(first.text).toMatch(/: hook_results \{.*"id":"long".*"verdict":false/);
    expect(second.headers['x-gateway-cache-status']).toBe('MISS');
    expect(second.text).toMatch(/: hook_results \{.*"id":"long".*"verdict":false/);
    expect(fake.requests).toHaveLength(2);
  });

  it('an answer that passed its output checks is cached and replayed', async () => {
    const config = { ...target(fake), cache: { mode: 'simple' }, output_guardrails: [{ id: 'nonempty', 'default.characterCount': { minCharacters: 1 } }] };
    const body = chat('good answer please');
    const first = await send(config, body);
    const second = await send(config, body);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers['x-gateway-cache-status']).toBe('HIT');
    expect(fake.requests).toHaveLength(1);
  });
});

describe('check metrics', () => {
  it('count a passing check as pass, a failing one as fail, and only a check that threw as error', async () => {
    const count = async (verdict: string): Promise<number> => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`sluice_check_verdicts_total{check="default.sentenceCount",verdict="${verdict}"}`));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = { pass: await count('pass'), fail: await count('fail'), error: await count('error') };
    const config = (min: number) => ({ ...target(fake), input_guardrails: [{ id: 'sentences', 'default.sentenceCount': { minSentences: min, maxSentences: 10 } }] });
    expect((await send(config(1), chat('One sentence.'))).status).toBe(200);
    expect((await send(config(5), chat('One sentence.'))).status).toBe(246);
    expect(await count('pass')).toBe(before.pass + 1);
    expect(await count('fail')).toBe(before.fail + 1);
    expect(await count('error')).toBe(before.error);
  });
});
