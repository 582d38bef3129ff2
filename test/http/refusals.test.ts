/**
 * Refusals say who refused, and whether a retry can help: a 446 names the hook, its list and the
 * deciding checks (never the checked text); answers no retry can change carry `x-should-retry: false`
 * (the openai SDKs read it), those a retry may change (408, 429, 5xx) leave it to the client; the
 * 401s say which header carries the gateway key and which the provider key.
 */
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatWithUsage, FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { EXCHANGE_TIMEOUT_MS, post, type Answer } from '../helpers/http.js';
import { jsonOrUndefined } from '../helpers/json.js';

const PROVIDER_KEY = 'sk-provider-secret-refusals';
const WS_KEY = 'sk-test-refusals-ws-0123456789';
const CARD = '4111 1111 1111 1111';
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway({
    options: { 'body-limit': '2kb' },
    bootstrapYaml: `
api_keys:
  - { key: ${WS_KEY}, name: refusals, workspace_id: ws-refusals, organisation_id: org-refusals }
`,
  });
});
afterEach(() => fake.reset());
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/** Headers reaching the fake through custom_host with the provider key in Authorization. */
const via = (extra: Record<string, string> = {}): Record<string, string> => ({
  'x-gateway-api-key': TEST_KEY,
  'content-type': 'application/json',
  'x-gateway-provider': 'openai',
  'x-gateway-custom-host': fake.baseUrl,
  authorization: `Bearer ${PROVIDER_KEY}`,
  ...extra,
});

async function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const res = await request(`${gw.url}${path}`, { method: method as 'GET', headers, body, headersTimeout: EXCHANGE_TIMEOUT_MS, bodyTimeout: EXCHANGE_TIMEOUT_MS });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: jsonOrUndefined(text), cacheStatus: undefined, ms: 0 };
}

const withConfig = (config: unknown, body: unknown = CHAT): Promise<Answer> =>
  post(`${gw.url}/v1/chat/completions`, { 'x-gateway-api-key': TEST_KEY, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config) }, body);
const target = { provider: 'openai', custom_host: '', api_key: PROVIDER_KEY };

describe('a 446 names who denied', () => {
  it('a request denied by an input guardrail: the hook id, its list and the failed check; not the text; not to be retried', async () => {
    const config = {
      ...target,
      custom_host: fake.baseUrl,
      input_guardrails: [
        { id: 'polite', 'default.contains': { operator: 'none', words: ['rude'] }, deny: true },
        { id: 'no-cards', 'default.regexMatch': { rule: '\\d{4} \\d{4} \\d{4} \\d{4}', not: true }, deny: true },
      ],
    };
    const r = await withConfig(config, { ...CHAT, messages: [{ role: 'user', content: `my card is ${CARD}` }] });
    expect(r.status).toBe(446);
    expect(r.json.error.message).toBe('Hook "no-cards" (input_guardrails) denied the request: checks failed: default.regexMatch.');
    expect(r.headers['x-should-retry']).toBe('false');
    expect(r.text).not.toContain(CARD);
    expect(fake.requests).toHaveLength(0);
  });

  it('an answer denied by an output guardrail says "answer"; the openai SDK gets the message and the header', async () => {
    const config = { ...target, custom_host: fake.baseUrl, output_guardrails: [{ id: 'short-answers', 'default.wordCount': { maxWords: 1 }, deny: true }] };
    const client = new OpenAI({ apiKey: 'unused', baseURL: `${gw.url}/v1`, defaultHeaders: { 'x-gateway-api-key': TEST_KEY, 'x-gateway-config': JSON.stringify(config) } });
    const err = await client.chat.completions.create({ ...CHAT, messages: [{ role: 'user', content: 'three words here' }] } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(446);
    expect(e.message).toContain('Hook "short-answers" (output_guardrails) denied the answer: checks failed: default.wordCount.');
    expect(e.headers?.get('x-should-retry')).toBe('false');
    expect(e.message).not.toContain('three words here');
    // one call: the SDK (default maxRetries) does not repeat a 446
    expect(fake.requests).toHaveLength(1);
  });
});

describe('x-should-retry', () => {
  const final = async (r: Promise<Answer>, status: number): Promise<void> => {
    const a = await r;
    expect(a.status).toBe(status);
    expect(a.headers['x-should-retry']).toBe('false');
  };

  it('is false on answers no retry can change: 400, 401, 404, 405, 413, 415, a provider 400', async () => {
    await final(send('POST', '/v1/chat/completions', via(), '{"model":'), 400);
    await final(send('POST', '/v1/chat/completions', { 'content-type': 'application/json' }, JSON.stringify(CHAT)), 401);
    await final(send('GET', '/v1/no-such-route', via()), 404);
    await final(send('GET', '/v1/chat/completions', via()), 405);
    await final(send('POST', '/v1/chat/completions', via(), JSON.stringify({ ...CHAT, messages: [{ role: 'user', content: 'x'.repeat(4096) }] })), 413);
    await final(send('POST', '/v1/chat/completions', via({ 'content-type': 'text/plain' }), 'hi'), 415);
    fake.enqueue('/v1/chat/completions', openAIError(400, 'bad', 'invalid_request_error'));
    await final(send('POST', '/v1/chat/completions', via(), JSON.stringify(CHAT)), 400);
  });

  it('is false on a 412: a usage limit stays reached until its period resets', async () => {
    fake.setDefault('/v1/chat/completions', chatWithUsage({ prompt_tokens: 20, completion_tokens: 10 }));
    const caseId = randomUUID();
    const created = await send(
      'POST',
      '/v1/policies/usage-limits',
      { 'x-gateway-api-key': TEST_KEY, 'content-type': 'application/json' },
      JSON.stringify({ name: 'tiny', type: 'tokens', credit_limit: 1, workspace_id: 'ws-refusals', organisation_id: 'org-refusals', conditions: [{ key: 'metadata.case', value: caseId }] }),
    );
    expect(created.status).toBe(201);
    const headers = via({ 'x-gateway-api-key': WS_KEY, 'x-gateway-metadata': JSON.stringify({ case: caseId }) });
    // Refused once usage reaches the limit: at once, or after the first answer's 30 tokens.
    let r = await send('POST', '/v1/chat/completions', headers, JSON.stringify({ ...CHAT, max_tokens: 10 }));
    if (r.status === 200) r = await send('POST', '/v1/chat/completions', headers, JSON.stringify({ ...CHAT, max_tokens: 10 }));
    expect(r.status).toBe(412);
    expect(r.headers['x-should-retry']).toBe('false');
  });

  it('is left to the client on 429 and 5xx, and a provider’s own value is passed on', async () => {
    fake.enqueue('/v1/chat/completions', openAIError(429, 'slow down', 'rate_limit_exceeded'));
    const limited = await send('POST', '/v1/chat/completions', via(), JSON.stringify(CHAT));
    expect(limited.status).toBe(429);
    expect(limited.headers['x-should-retry']).toBeUndefined();
    fake.enqueue('/v1/chat/completions', openAIError(500, 'boom', 'server_error'));
    const failed = await send('POST', '/v1/chat/completions', via(), JSON.stringify(CHAT));
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.headers['x-should-retry']).toBeUndefined();
    fake.enqueue('/v1/chat/completions', { ...openAIError(400, 'try again', 'invalid_request_error'), headers: { 'x-should-retry': 'true' } });
    const told = await send('POST', '/v1/chat/completions', via(), JSON.stringify(CHAT));
    expect([told.status, told.headers['x-should-retry']]).toEqual([400, 'true']);
  });
});

describe('which header carries the gateway key', () => {
  it('no key anywhere: the 401 names every way', async () => {
    const r = await send('POST', '/v1/chat/completions', { 'content-type': 'application/json', 'x-gateway-provider': 'openai' }, JSON.stringify(CHAT));
    expect([r.status, r.json.error.code]).toEqual([401, 'missing_gateway_key']);
    expect(r.json.error.message).toContain('x-gateway-api-key (Authorization: Bearer then carries the provider key)');
    expect(r.json.error.message).toContain('Authorization: Bearer <gateway key> without x-gateway-api-key');
    expect(r.json.error.message).toContain('x-api-key: <gateway key> without it');
  });

  it('with x-gateway-api-key present, Authorization is not tried as a gateway key', async () => {
    const r = await send('POST', '/v1/chat/completions', via({ 'x-gateway-api-key': 'sk-wrong-gateway-key-000000000', authorization: `Bearer ${TEST_KEY}` }), JSON.stringify(CHAT));
    expect([r.status, r.json.error.code, r.json.error.param]).toEqual([401, 'invalid_gateway_key', 'x-gateway-api-key']);
    expect(fake.requests).toHaveLength(0);
  });

  it('with x-gateway-api-key present, Authorization is still the provider key', async () => {
    const r = await send('POST', '/v1/chat/completions', via(), JSON.stringify(CHAT));
    expect(r.status).toBe(200);
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
  });

  it('a gateway key in Authorization opens the management routes too, and a config key is the provider key', async () => {
    const listed = await send('GET', '/v1/virtual-keys', { authorization: `Bearer ${WS_KEY}` });
    expect(listed.status).toBe(200);
    const r = await send('POST', '/v1/chat/completions', { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify({ ...target, custom_host: fake.baseUrl }) }, JSON.stringify(CHAT));
    expect(r.status).toBe(200);
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
  });

  it('a bearer token that is not a gateway key is refused without echoing it', async () => {
    const r = await send('POST', '/v1/chat/completions', { authorization: `Bearer ${PROVIDER_KEY}`, 'content-type': 'application/json', 'x-gateway-provider': 'openai' }, JSON.stringify(CHAT));
    expect([r.status, r.json.error.code, r.json.error.param]).toEqual([401, 'missing_gateway_key', 'authorization']);
    expect(r.json.error.message).toContain('the Authorization bearer token is not a gateway key');
    expect(r.text).not.toContain(PROVIDER_KEY);
    expect(gw.logText()).not.toContain(PROVIDER_KEY);
  });
});
