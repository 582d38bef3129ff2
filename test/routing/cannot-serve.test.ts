/**
 * A fallback or loadbalance is not defeated by translation: a value outside a provider's range is
 * clamped into it (said in x-gateway-params-mapped and the log line), a target that cannot serve a
 * request is passed over before any call to it whatever on_status_codes says, only when no target
 * can serve is the answer a 400 naming the field and the targets, and an error response's headers
 * name the target whose error it is. Real fakes of OpenAI, Anthropic and Bedrock on 127.0.0.1.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { anthropicError, FakeAnthropic } from '../fakes/anthropic-server.js';
import { FakeBedrock } from '../fakes/bedrock-server.js';
import { parseSse } from '../helpers/sse.js';
import { logLine, traceId } from '../http/_util.js';
import { chat, PROVIDER_KEY } from './helpers.js';

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let bedrock: FakeBedrock;
let gw: TestGateway;
/** The gateway's loadbalance picks, handed out in turn (then 0). */
let picks: number[] = [];

beforeAll(async () => {
  [openai, anthropic, bedrock] = await Promise.all([FakeOpenAI.start(), FakeAnthropic.start(), FakeBedrock.start()]);
  gw = await startGateway({ random: () => picks.shift() ?? 0 });
});
afterEach(() => {
  openai.reset();
  anthropic.reset();
  bedrock.reset();
  picks = [];
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close(), bedrock?.close()]);
});

const toOpenAI = () => ({ provider: 'openai', custom_host: openai.baseUrl, api_key: PROVIDER_KEY });
const toAnthropic = () => ({ provider: 'anthropic', custom_host: anthropic.baseUrl, api_key: anthropic.apiKey });
const toBedrock = () => ({ provider: 'bedrock', custom_host: bedrock.url, api_key: bedrock.apiKey, cloud_b_region: bedrock.region });
const CLAUDE = 'claude-sonnet-4-5';
const ask = (extra: Record<string, unknown>) => ({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }], ...extra });
/** A trace id for one request, in the header that sets it. */
const traced = (label: string) => {
  const trace = traceId(label);
  return { trace, headers: { 'x-gateway-trace-id': trace } };
};

describe('a value outside a provider range is clamped into it, and said', () => {
  it('fallback [openai (503), anthropic] with temperature 1.6 → 200 from anthropic, which got temperature 1', async () => {
    openai.enqueue('/v1/chat/completions', openAIError(503, 'down for maintenance'));
    const config = { strategy: { mode: 'fallback', on_status_codes: [503] }, targets: [toOpenAI(), toAnthropic()] };
    const t = traced('mapped');
    const r = await chat(gw, config, { body: ask({ temperature: 1.6 }), headers: t.headers });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-provider']).toBe('anthropic');
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect(r.headers['x-gateway-params-mapped']).toBe('temperature=1.6->1');
    expect((await openai.waitForRequests(1))[0]!.body.temperature).toBe(1.6);
    expect((await anthropic.waitForRequests(1))[0]!.body.temperature).toBe(1);
    expect(await logLine(gw, t.trace)).toMatchObject({ provider: 'anthropic', target: 'config.targets[1]', params_mapped: 'temperature=1.6->1' });
  });

  it('the same on a stream: the SSE answer comes from anthropic with the header', async () => {
    openai.enqueue('/v1/chat/completions', openAIError(503, 'down for maintenance'));
    const config = { strategy: { mode: 'fallback' }, targets: [toOpenAI(), toAnthropic()] };
    const r = await chat(gw, config, { body: ask({ temperature: 2, stream: true }) });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-params-mapped']).toBe('temperature=2->1');
    expect(parseSse(r.text).at(-1)!.data).toBe('[DONE]');
    expect((await anthropic.waitForRequests(1))[0]!.body.temperature).toBe(1);
  });

  it('a value in range is sent as it is and no header is set', async () => {
    const t = traced('in-range');
    const r = await chat(gw, toAnthropic(), { body: ask({ temperature: 0.7 }), headers: t.headers });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-params-mapped']).toBeUndefined();
    expect((await anthropic.waitForRequests(1))[0]!.body.temperature).toBe(0.7);
    expect(await logLine(gw, t.trace)).not.toHaveProperty('params_mapped');
  });

  it('bedrock: temperature into Converse 0–1, and a Claude model top_k into 0–500', async () => {
    const r = await chat(gw, toBedrock(), { body: ask({ model: 'us.anthropic.claude-3-5-sonnet-20240620-v1:0', temperature: 1.5, top_k: 900 }) });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-params-mapped']).toBe('temperature=1.5->1,top_k=900->500');
    const sent = (await bedrock.waitForRequests(1))[0]!.body;
    expect(sent.inferenceConfig.temperature).toBe(1);
    expect(sent.additionalModelRequestFields.top_k).toBe(500);
  });

  it('bedrock: top_k of a model outside the Claude family is left as sent', async () => {
    const r = await chat(gw, toBedrock(), { body: ask({ model: 'amazon.nova-pro-v1:0', top_k: 900 }) });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-params-mapped']).toBeUndefined();
    expect((await bedrock.waitForRequests(1))[0]!.body.additionalModelRequestFields.top_k).toBe(900);
  });
});

describe('a target that cannot serve the request is passed over before any call to it', () => {
  it('fallback [anthropic, openai] with n 2 and on_status_codes [429]: openai answers, anthropic is never called', async () => {
    const config = { strategy: { mode: 'fallback', on_status_codes: [429] }, targets: [toAnthropic(), toOpenAI()] };
    const t = traced('passed-over');
    const r = await chat(gw, config, { body: ask({ n: 2 }), headers: t.headers });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-provider']).toBe('openai');
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect((await openai.waitForRequests(1))[0]!.body.n).toBe(2);
    expect(anthropic.requests).toHaveLength(0);
    // Passed over, not tried: the log counts one attempt.
    expect((await logLine(gw, t.trace)).attempts).toBe(1);
  });

  it('loadbalance: a pick of the target that cannot serve is set aside and the other serves; it is never called', async () => {
    const config = { strategy: { mode: 'loadbalance' }, targets: [{ ...toAnthropic(), weight: 1 }, { ...toOpenAI(), weight: 1 }] };
    for (let i = 0; i < 3; i++) {
      picks = [0]; // the first pick lands on anthropic (targets[0])
      const r = await chat(gw, config, { body: ask({ logprobs: true }) });
      expect(r.status).toBe(200);
      expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    }
    expect(await openai.waitForRequests(3)).toHaveLength(3);
    expect(anthropic.requests).toHaveLength(0);
  });

  it('every target unable → 400 naming the field and each target; no provider was called', async () => {
    const config = { strategy: { mode: 'fallback', on_status_codes: [503] }, targets: [toAnthropic(), toBedrock()] };
    const r = await chat(gw, config, { body: ask({ n: 3 }) });
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('n');
    expect(r.json.error.message).toMatch(/^No target can serve this request \(n\): /);
    expect(r.json.error.message).toContain('config.targets[0] (anthropic): Anthropic returns one choice; n must be 1');
    expect(r.json.error.message).toContain('config.targets[1] (bedrock): n is not supported by provider bedrock');
    // No single target's error is the answer: none is named.
    expect(r.headers['x-gateway-provider']).toBeUndefined();
    expect(r.headers['x-gateway-target']).toBeUndefined();
    expect(anthropic.requests).toHaveLength(0);
    expect(bedrock.requests).toHaveLength(0);
  });

  it('every loadbalance target unable → the same 400', async () => {
    const config = { strategy: { mode: 'loadbalance' }, targets: [toAnthropic(), toBedrock()] };
    const r = await chat(gw, config, { body: ask({ audio: { voice: 'alloy', format: 'wav' }, modalities: ['text', 'audio'] }) });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/^No target can serve this request \(/);
    expect(r.json.error.message).toContain('config.targets[0] (anthropic)');
    expect(r.json.error.message).toContain('config.targets[1] (bedrock)');
    expect(anthropic.requests).toHaveLength(0);
    expect(bedrock.requests).toHaveLength(0);
  });

  it('one target that cannot serve: its own 400, and the headers name it', async () => {
    const r = await chat(gw, toAnthropic(), { body: ask({ n: 2 }) });
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('n');
    expect(r.json.error.message).toBe('Anthropic returns one choice; n must be 1 (n).');
    expect(r.headers['x-gateway-provider']).toBe('anthropic');
    expect(r.headers['x-gateway-target']).toBe('config');
    expect(anthropic.requests).toHaveLength(0);
  });
});

describe('error headers name the target whose error is the answer', () => {
  it('fallback [openai (503), anthropic (500)] → the 500, naming anthropic and targets[1]', async () => {
    openai.enqueue('/v1/chat/completions', openAIError(503, 'down for maintenance'));
    anthropic.enqueue('/v1/messages', anthropicError(500, 'api_error', 'Internal server error'));
    const config = { strategy: { mode: 'fallback' }, targets: [toOpenAI(), toAnthropic()] };
    const t = traced('second-fails');
    const r = await chat(gw, config, { body: ask({ temperature: 1.2 }), headers: t.headers });
    expect(r.status).toBe(500);
    expect(r.json.error.message).toBe('Internal server error');
    expect(r.headers['x-gateway-provider']).toBe('anthropic');
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    // The attempt that failed was sent the mapped value; its error response says so too.
    expect(r.headers['x-gateway-params-mapped']).toBe('temperature=1.2->1');
    expect(await logLine(gw, t.trace)).toMatchObject({ provider: 'anthropic', target: 'config.targets[1]', params_mapped: 'temperature=1.2->1' });
  });

  it('fallback [openai (503), anthropic that cannot serve] → openai\'s 503, naming openai (the error returned)', async () => {
    openai.enqueue('/v1/chat/completions', openAIError(503, 'down for maintenance'));
    const config = { strategy: { mode: 'fallback' }, targets: [toOpenAI(), toAnthropic()] };
    const r = await chat(gw, config, { body: ask({ n: 2 }) });
    expect(r.status).toBe(503);
    expect(r.headers['x-gateway-provider']).toBe('openai');
    expect(r.headers['x-gateway-target']).toBe('config.targets[0]');
    expect(anthropic.requests).toHaveLength(0);
  });
});

describe('a refusal says nothing of a target\'s health', () => {
  it('between two failures it does not reset the circuit\'s count: the second failure opens it', async () => {
    const config = { ...toAnthropic(), cb_config: { failure_threshold: 2, cooldown_interval: 60_000 } };
    anthropic.enqueue('/v1/messages', anthropicError(500, 'api_error', 'first'));
    anthropic.enqueue('/v1/messages', anthropicError(500, 'api_error', 'second'));
    expect((await chat(gw, config, { body: ask({}) })).status).toBe(500);
    expect((await chat(gw, config, { body: ask({ n: 2 }) })).status).toBe(400);
    expect((await chat(gw, config, { body: ask({}) })).status).toBe(500);
    const open = await chat(gw, config, { body: ask({}) });
    expect(open.status).toBe(503);
    expect(open.json.error.code).toBe('circuit_open');
    expect(anthropic.requests).toHaveLength(2);
  });
});
