import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { FakeOpenAI, openAIError, type ScriptedResponse } from '../fakes/openai-server.js';

/**
 * The rest of the gateway on /v1/responses, with the official openai SDK: retries, a fallback from
 * a target that answers 503 to the next, and the per-target metrics (endpoint="responses"), both
 * where the gateway translates into chat (openai-compatible) and where it passes the Responses API
 * through (openai).
 */
let compat: FakeOpenAI;
let native: FakeOpenAI;
let gw: TestGateway;

const CHAT = '/v1/chat/completions';
const RESPONSES = '/v1/responses';
const down = (status: number): ScriptedResponse => ({ ...openAIError(status, 'over capacity'), headers: { 'retry-after-ms': '1' } });
const translated = (name: string, extra: object = {}) => ({ name, provider: 'openai-compatible', api_key: 'sk-compat', custom_host: compat.baseUrl, ...extra });
const passedThrough = (name: string, extra: object = {}) => ({ name, provider: 'openai', api_key: 'sk-native', custom_host: native.baseUrl, ...extra });

function sdk(config: object): OpenAI {
  return new OpenAI({ apiKey: 'unused', baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': gw.key, 'x-gateway-config': JSON.stringify(config) } });
}

async function metric(pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  return text.split('\n').filter((l) => pattern.test(l)).reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

beforeAll(async () => {
  [compat, native] = await Promise.all([FakeOpenAI.start(), FakeOpenAI.start()]);
  gw = await startGateway();
});
afterEach(() => {
  compat.reset();
  native.reset();
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([compat?.close(), native?.close()]);
});

describe('retries on /v1/responses', () => {
  it('translated: a 503 from chat completions is retried; the retry answers', async () => {
    compat.enqueue(CHAT, down(503));
    const { data, response } = await sdk(translated('t-retry', { retry: { attempts: 1, use_retry_after_headers: true } })).responses.create({ model: 'gpt-4o-mini', input: 'hi' }).withResponse();
    expect(data.status).toBe('completed');
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(compat.requests.map((r) => r.path)).toEqual([CHAT, CHAT]);
  });

  it('passed through: a 503 from the Responses API is retried; the retry answers', async () => {
    native.enqueue(RESPONSES, down(503));
    const { data, response } = await sdk(passedThrough('n-retry', { retry: { attempts: 1, use_retry_after_headers: true } })).responses.create({ model: 'gpt-4o-mini', input: 'hi' }).withResponse();
    expect(data.status).toBe('completed');
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(native.requests.map((r) => r.path)).toEqual([RESPONSES, RESPONSES]);
  });
});

describe('fallback on /v1/responses', () => {
  it('translated first, 503; passed through second answers; both targets counted with endpoint="responses"', async () => {
    compat.enqueue(CHAT, down(503));
    const config = { strategy: { mode: 'fallback' }, targets: [translated('fb-compat'), passedThrough('fb-native')] };
    const { data, response } = await sdk(config).responses.create({ model: 'gpt-4o-mini', input: 'hi' }).withResponse();
    expect(data.status).toBe('completed');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(compat.requests).toHaveLength(1);
    expect(native.requests.map((r) => r.path)).toEqual([RESPONSES]);
    expect((await sdk(config).responses.retrieve(data.id)).status).toBe('completed');
    await vi.waitFor(async () => {
      expect(await metric(/^sluice_target_requests_total\{.*target="fb-compat".*provider="openai-compatible".*endpoint="responses".*status_class="5xx"/)).toBe(1);
      expect(await metric(/^sluice_target_requests_total\{.*target="fb-native".*provider="openai".*endpoint="responses".*status_class="2xx"/)).toBe(1);
    });
  });

  it('a stream: passed through first, 503; translated second streams the Responses events', async () => {
    native.enqueue(RESPONSES, down(503));
    const config = { strategy: { mode: 'fallback' }, targets: [passedThrough('fs-native'), translated('fs-compat')] };
    const stream = sdk(config).responses.stream({ model: 'gpt-4o-mini', input: 'hi' });
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output_text.length).toBeGreaterThan(0);
    expect(compat.requests.map((r) => [r.path, r.body.stream])).toEqual([[CHAT, true]]);
    await vi.waitFor(async () => {
      expect(await metric(/^sluice_target_requests_total\{.*target="fs-native".*endpoint="responses".*status_class="5xx"/)).toBe(1);
      expect(await metric(/^sluice_target_requests_total\{.*target="fs-compat".*endpoint="responses".*status_class="2xx"/)).toBe(1);
      expect(await metric(/^sluice_request_duration_seconds_count\{.*endpoint="responses"/)).toBeGreaterThan(0);
    });
  });
});
