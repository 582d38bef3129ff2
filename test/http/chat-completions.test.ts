import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { freePort } from '../helpers/net.js';
import type { Config } from '../../src/config/schema.js';
import { logLine, PROVIDER_KEY, traceId, viaHeaders } from './_util.js';

let fake: FakeOpenAI;
let gw: TestGateway;
let untrustingGw: TestGateway;

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  const saved = new Map<string, Config>([
    ['pinned-model', { provider: 'openai', api_key: PROVIDER_KEY, custom_host: fake.baseUrl, override_params: { model: 'pinned-by-config', temperature: 0 } } as Config],
  ]);
  gw = await startGateway({
    savedConfigs: saved,
    bootstrapYaml: `virtual_keys:\n  fake-openai:\n    provider: openai\n    api_key: ${PROVIDER_KEY}\n    custom_host: ${fake.baseUrl}\n`,
  });
  untrustingGw = await startGateway({ options: { 'trusted-hosts': '' } });
});

afterEach(() => {
  fake.reset();
});

afterAll(async () => {
  await gw?.close();
  await untrustingGw?.close();
  await fake?.close();
});

function post(headers: Record<string, string>, body: unknown = CHAT, target: TestGateway = gw) {
  return request(`${target.url}/v1/chat/completions`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function json(res: Awaited<ReturnType<typeof request>>): Promise<any> {
  return JSON.parse(await res.body.text());
}

describe('POST /v1/chat/completions: non-stream round trip', () => {
  it('passes the provider body through byte for byte, with answer headers and usage in the log', async () => {
    // Odd spacing, key order and an escaped character: any re-serialisation would change these bytes.
    const raw =
      '{ "object":"chat.completion",  "id" : "chatcmpl-raw1", "created":1700000000,"model":"gpt-4o-mini",\n' +
      '  "choices":[{"index":0,"message":{"role":"assistant","content":"caf\\u00e9 \u2603"},"finish_reason":"stop"}],\n' +
      '  "usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10} }';
    fake.enqueue('/v1/chat/completions', { raw, headers: { 'x-request-id': 'req_upstream_42' } });
    const trace = traceId('roundtrip');
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }));
    const text = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(text).toBe(raw);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-gateway-trace-id']).toBe(trace);
    expect(res.headers['x-gateway-provider']).toBe('openai');
    expect(res.headers['x-gateway-target']).toBe('config');
    expect(res.headers['x-request-id']).toBe('req_upstream_42');

    const [up] = await fake.waitForRequests(1);
    expect(up!.method).toBe('POST');
    expect(up!.path).toBe('/v1/chat/completions');
    expect(up!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(up!.body).toEqual(CHAT);
    // Gateway headers are not sent to the provider.
    expect(up!.headers['x-gateway-api-key']).toBeUndefined();
    expect(up!.headers['x-gateway-trace-id']).toBeUndefined();

    const line = await logLine(gw, trace);
    expect(line).toMatchObject({
      status: 200,
      provider: 'openai',
      target: 'config',
      path: '/v1/chat/completions',
      method: 'POST',
      stream: false,
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    expect(typeof line.latency_ms).toBe('number');
  });

  it('generates a trace id when none is sent and logs under it', async () => {
    const res = await post(viaHeaders(gw, fake.baseUrl));
    const body = await json(res);
    expect(res.statusCode).toBe(200);
    expect(body.choices[0].message.content).toBe('echo: hi');
    const generated = res.headers['x-gateway-trace-id'];
    expect(typeof generated).toBe('string');
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    const line = await logLine(gw, generated as string);
    expect(line.status).toBe(200);

    const again = await post(viaHeaders(gw, fake.baseUrl));
    await again.body.dump();
    expect(again.headers['x-gateway-trace-id']).not.toBe(generated);
  });

  it('sends unknown request fields on to the provider unchanged', async () => {
    const body = {
      ...CHAT,
      some_vendor_flag: true,
      nested_extension: { a: [1, 2, { b: 'c' }] },
      messages: [{ role: 'user', content: 'hi', name: 'alice', extra_message_field: 7 }],
    };
    const res = await post(viaHeaders(gw, fake.baseUrl), body);
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    const [up] = await fake.waitForRequests(1);
    expect(up!.body).toEqual(body);
  });
});

describe('per-request settings', () => {
  it('override_params from a saved config win over the body', async () => {
    const res = await post(gw.headers({ 'x-gateway-config': 'pinned-model' }), { ...CHAT, model: 'from-body', temperature: 1.5, top_p: 0.5 });
    const body = await json(res);
    expect(res.statusCode).toBe(200);
    expect(body.model).toBe('pinned-by-config');
    const [up] = await fake.waitForRequests(1);
    expect(up!.body.model).toBe('pinned-by-config');
    expect(up!.body.temperature).toBe(0);
    expect(up!.body.top_p).toBe(0.5);
  });

  it('override_params from an inline config win over the body', async () => {
    const config = { provider: 'openai', custom_host: fake.baseUrl, api_key: PROVIDER_KEY, override_params: { max_tokens: 5 } };
    const res = await post(gw.headers({ 'x-gateway-config': JSON.stringify(config) }), { ...CHAT, max_tokens: 500 });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    const [up] = await fake.waitForRequests(1);
    expect(up!.body.max_tokens).toBe(5);
  });

  it('forward_headers in a config forwards only the named headers', async () => {
    const config = { provider: 'openai', custom_host: fake.baseUrl, api_key: PROVIDER_KEY, forward_headers: ['x-tenant', 'X-Region'] };
    const res = await post(
      gw.headers({
        'x-gateway-config': JSON.stringify(config),
        'x-tenant': 'acme',
        'x-region': 'eu',
        'x-not-named': 'secret-ish',
      }),
    );
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    const [up] = await fake.waitForRequests(1);
    expect(up!.headers['x-tenant']).toBe('acme');
    expect(up!.headers['x-region']).toBe('eu');
    expect(up!.headers['x-not-named']).toBeUndefined();
    expect(up!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
  });

  it('x-gateway-forward-headers forwards only the named headers', async () => {
    const res = await post(
      viaHeaders(gw, fake.baseUrl, {
        'x-gateway-forward-headers': 'x-tenant, x-trace-parent',
        'x-tenant': 'acme',
        'x-trace-parent': '00-abc',
        'x-other': 'no',
      }),
    );
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    const [up] = await fake.waitForRequests(1);
    expect(up!.headers['x-tenant']).toBe('acme');
    expect(up!.headers['x-trace-parent']).toBe('00-abc');
    expect(up!.headers['x-other']).toBeUndefined();
  });

  it('without forward_headers, client headers are not forwarded', async () => {
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-tenant': 'acme' }));
    await res.body.dump();
    const [up] = await fake.waitForRequests(1);
    expect(up!.headers['x-tenant']).toBeUndefined();
  });

  it('x-gateway-metadata that is not JSON is a 400 naming the header, and nothing reaches the provider', async () => {
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-metadata': '{not json' }));
    const body = await json(res);
    expect(res.statusCode).toBe(400);
    expect(body.error.param).toBe('x-gateway-metadata');
    expect(body.error.message).toContain('x-gateway-metadata');
    expect(body.error.type).toBe('invalid_request_error');
    expect(fake.requests).toHaveLength(0);
  });

  it('x-gateway-metadata that is JSON but not an object is a 400', async () => {
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-metadata': '[1,2]' }));
    const body = await json(res);
    expect(res.statusCode).toBe(400);
    expect(body.error.param).toBe('x-gateway-metadata');
  });

  it('valid x-gateway-metadata appears in the log line', async () => {
    const trace = traceId('meta');
    const metadata = { user: 'u-17', team: 'search', tier: 3 };
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace, 'x-gateway-metadata': JSON.stringify(metadata) }));
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    const line = await logLine(gw, trace);
    expect(line.metadata).toEqual(metadata);
  });
});

describe('upstream errors', () => {
  it('an upstream 429 keeps its status and message, and passes retry-after on', async () => {
    fake.enqueue('/v1/chat/completions', { ...openAIError(429, 'Rate limit reached for gpt-4o-mini'), headers: { 'retry-after': '7' } });
    const trace = traceId('429');
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }));
    const body = await json(res);
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(body.error.message).toBe('Rate limit reached for gpt-4o-mini');
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.trace_id).toBe(trace);
    const line = await logLine(gw, trace);
    expect(line.status).toBe(429);
    expect(line.error).toMatchObject({ code: 'upstream_error', status: 429 });
  });

  it('a provider key echoed in an upstream error message reaches neither the client nor the log', async () => {
    fake.enqueue('/v1/chat/completions', openAIError(401, `Incorrect API key provided: ${PROVIDER_KEY}.`));
    const trace = traceId('echo');
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }));
    const body = await json(res);
    expect(res.statusCode).toBe(401);
    expect(body.error.message).toBe('Incorrect API key provided: [redacted].');
    await logLine(gw, trace);
    expect(gw.logText()).not.toContain(PROVIDER_KEY);
  });

  it('an upstream 400 keeps its status, type and message', async () => {
    fake.enqueue('/v1/chat/completions', openAIError(400, "Invalid value for 'temperature'", 'invalid_request_error', 'invalid_value'));
    const res = await post(viaHeaders(gw, fake.baseUrl));
    const body = await json(res);
    expect(res.statusCode).toBe(400);
    expect(body.error).toMatchObject({ message: "Invalid value for 'temperature'", type: 'invalid_request_error', code: 'invalid_value' });
  });

  it('an upstream 503 keeps its status and message', async () => {
    fake.enqueue('/v1/chat/completions', openAIError(503, 'The engine is currently overloaded'));
    const res = await post(viaHeaders(gw, fake.baseUrl));
    const body = await json(res);
    expect(res.statusCode).toBe(503);
    expect(body.error.message).toBe('The engine is currently overloaded');
    expect(typeof body.trace_id).toBe('string');
  });

  it('an upstream 500 with a non-JSON body keeps its status and shows the text', async () => {
    fake.enqueue('/v1/chat/completions', { status: 500, raw: 'upstream exploded', headers: { 'content-type': 'text/plain' } });
    const res = await post(viaHeaders(gw, fake.baseUrl));
    const body = await json(res);
    expect(res.statusCode).toBe(500);
    expect(body.error.message).toBe('upstream exploded');
  });

  it('a provider that answers 200 with a body that is not JSON is a 502', async () => {
    fake.enqueue('/v1/chat/completions', { raw: '<html>oops</html>', headers: { 'content-type': 'text/html' } });
    const res = await post(viaHeaders(gw, fake.baseUrl));
    const body = await json(res);
    expect(res.statusCode).toBe(502);
    expect(body.error.code).toBe('upstream_invalid_response');
  });

  it('an unreachable upstream (closed port) is a 502', async () => {
    const port = await freePort();
    const res = await post(viaHeaders(gw, `http://127.0.0.1:${port}/v1`));
    const body = await json(res);
    expect(res.statusCode).toBe(502);
    expect(body.error.code).toBe('upstream_unreachable');
    expect(body.error.type).toBe('upstream_error');
  });
});

describe('config resolution errors', () => {
  it('an invalid config is a 400 with issues carrying the paths', async () => {
    const config = { provider: 'openai', api_key: PROVIDER_KEY, custom_host: fake.baseUrl, retry: { attempts: 'three' }, bogus_key: 1 };
    const res = await post(gw.headers({ 'x-gateway-config': JSON.stringify(config) }));
    const body = await json(res);
    expect(res.statusCode).toBe(400);
    expect(body.error.code).toBe('invalid_config');
    expect(Array.isArray(body.issues)).toBe(true);
    expect(body.error.param).toBe('config.retry.attempts');
    const issues = body.issues as { path: (string | number)[]; message: string }[];
    expect(issues.map((i) => i.path)).toContainEqual(['config', 'retry', 'attempts']);
    // The unknown key is reported at the object that holds it, naming the key.
    expect(issues.some((i) => i.path.join('.') === 'config' && i.message.includes('bogus_key'))).toBe(true);
    expect(fake.requests).toHaveLength(0);
  });

  it('x-gateway-config that is not valid JSON is a 400 naming the header', async () => {
    const res = await post(gw.headers({ 'x-gateway-config': '{"provider":' }));
    const body = await json(res);
    expect(res.statusCode).toBe(400);
    expect(body.error.param).toBe('x-gateway-config');
  });

  it('an unknown saved config id is a 404', async () => {
    const res = await post(gw.headers({ 'x-gateway-config': 'no-such-config' }));
    const body = await json(res);
    expect(res.statusCode).toBe(404);
    expect(body.error.code).toBe('config_not_found');
    expect(body.error.message).toContain('no-such-config');
  });

  it('a known virtual key reaches its provider with its own credential', async () => {
    const res = await post(gw.headers({ 'x-gateway-virtual-key': 'fake-openai' }));
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    const [up] = await fake.waitForRequests(1);
    expect(up!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
  });

  it('an unknown virtual key is a 404', async () => {
    const res = await post(gw.headers({ 'x-gateway-virtual-key': 'no-such-key' }));
    const body = await json(res);
    expect(res.statusCode).toBe(404);
    expect(body.error.code).toBe('virtual_key_not_found');
    expect(fake.requests).toHaveLength(0);
  });

  it('an unknown provider is a 400', async () => {
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-provider': 'no-such-provider' }));
    const body = await json(res);
    expect(res.statusCode).toBe(400);
    expect(body.error.code).toBe('unknown_provider');
    expect(body.error.message).toContain('no-such-provider');
    expect(fake.requests).toHaveLength(0);
  });

  it('no provider at all is a 400', async () => {
    const res = await post(gw.headers());
    const body = await json(res);
    expect(res.statusCode).toBe(400);
    expect(body.error.code).toBe('missing_provider');
  });

  it('custom_host on a private address without trust is a 400 and the provider receives nothing', async () => {
    const res = await post(viaHeaders(untrustingGw, fake.baseUrl), CHAT, untrustingGw);
    const body = await json(res);
    expect(res.statusCode).toBe(400);
    expect(body.error.code).toBe('custom_host_not_allowed');
    expect(body.error.param).toBe('custom_host');

    const inline = { provider: 'openai', api_key: PROVIDER_KEY, custom_host: `http://localhost:${new URL(fake.origin).port}/v1` };
    const res2 = await post(untrustingGw.headers({ 'x-gateway-config': JSON.stringify(inline) }), CHAT, untrustingGw);
    const body2 = await json(res2);
    expect(res2.statusCode).toBe(400);
    expect(body2.error.code).toBe('custom_host_not_allowed');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('request_timeout', () => {
  it('request_timeout in a config → 408 timeout_error and the upstream request is aborted', async () => {
    fake.enqueue('/v1/chat/completions', { hang: true });
    const config = { provider: 'openai', custom_host: fake.baseUrl, api_key: PROVIDER_KEY, request_timeout: 150 };
    const trace = traceId('timeout-config');
    const res = await post(gw.headers({ 'x-gateway-config': JSON.stringify(config), 'x-gateway-trace-id': trace }));
    const body = await json(res);
    expect(res.statusCode).toBe(408);
    expect(body.error.type).toBe('timeout_error');
    expect(body.error.code).toBe('request_timeout');
    const [up] = await fake.waitForRequests(1);
    await up!.closed;
    expect(up!.aborted).toBe(true);
    const line = await logLine(gw, trace);
    expect(line.status).toBe(408);
  });

  it('x-gateway-request-timeout → 408 timeout_error and the upstream request is aborted', async () => {
    fake.enqueue('/v1/chat/completions', { hang: true });
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-request-timeout': '120' }));
    const body = await json(res);
    expect(res.statusCode).toBe(408);
    expect(body.error.type).toBe('timeout_error');
    const [up] = await fake.waitForRequests(1);
    await up!.closed;
    expect(up!.aborted).toBe(true);
  });

  it('an x-gateway-request-timeout that is not a number is a 400 naming the header', async () => {
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-request-timeout': 'soon' }));
    const body = await json(res);
    expect(res.statusCode).toBe(400);
    expect(body.error.param).toBe('x-gateway-request-timeout');
    expect(fake.requests).toHaveLength(0);
  });

  it('an answer inside the timeout is not affected', async () => {
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-request-timeout': '5000' }));
    await res.body.dump();
    expect(res.statusCode).toBe(200);
  });
});
