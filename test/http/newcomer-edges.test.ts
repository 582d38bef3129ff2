/**
 * The rough edges a newcomer hits first, through real HTTP against a fake upstream: a provider
 * named without its credential, a config header that is neither JSON nor an id, a POST route asked
 * with GET, the log line of a request whose client left, and error responses that say which target
 * failed and what the cache did.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatChunks, FakeOpenAI, openAIError, sseFrames } from '../fakes/openai-server.js';
import { logLine, PROVIDER_KEY, traceId, viaHeaders } from './_util.js';

let fake: FakeOpenAI;
let gw: TestGateway;

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway();
});
afterEach(() => fake.reset());
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

async function post(headers: Record<string, string>, body: unknown = CHAT, path = '/v1/chat/completions') {
  const res = await request(`${gw.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.statusCode, headers: res.headers, json: (await res.body.json()) as any };
}

const target = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', custom_host: fake.baseUrl, api_key: PROVIDER_KEY, ...extra });
const withConfig = (config: unknown, extra: Record<string, string> = {}) => gw.headers({ 'x-gateway-config': JSON.stringify(config), ...extra });

describe('a provider named without its credential', () => {
  it('x-gateway-provider without Authorization is missing_provider_credential naming authorization', async () => {
    const r = await post(gw.headers({ 'x-gateway-provider': 'openai' }));
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('missing_provider_credential');
    expect(r.json.error.param).toBe('authorization');
    expect(r.json.error.message).toContain('"openai"');
    expect(r.json.error.message).not.toContain('key sets');
  });

  it('an inline config naming only a provider says the same', async () => {
    const r = await post(withConfig({ provider: 'openai' }));
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('missing_provider_credential');
  });

  it('a config with another fault as well is still invalid_config with its issues', async () => {
    const r = await post(withConfig({ provider: 'openai', retry: { attempts: -1 } }));
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_config');
    expect(r.json.error.param).toBe('config.retry.attempts');
  });
});

describe('x-gateway-config that is not an id', () => {
  it.each(['[1]', ' [] ', '{"provider"', '"fallback"', 'a b', 'fallback?x=1'])('%j is a 400 naming the header', async (value) => {
    const r = await post(gw.headers({ 'x-gateway-config': value }));
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_header');
    expect(r.json.error.param).toBe('x-gateway-config');
  });

  it('a well-formed id that is not saved is still 404 config_not_found', async () => {
    const r = await post(gw.headers({ 'x-gateway-config': 'no-such-config' }));
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('config_not_found');
  });
});

describe('a proxied route asked with another method', () => {
  it.each([
    ['GET', '/v1/chat/completions', 'POST'],
    ['PUT', '/v1/embeddings', 'POST'],
    ['POST', '/v1/models', 'GET'],
    ['DELETE', '/v1/completions?x=1', 'POST'],
  ])('%s %s is a 405 with Allow: %s', async (method, path, allow) => {
    const res = await request(`${gw.url}${path}`, { method, headers: gw.headers() });
    const body = (await res.body.json()) as any;
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(body.error.code).toBe('method_not_allowed');
    expect(body.error.type).toBe('invalid_request_error');
  });

  it('needs the gateway key first, as every /v1 route does', async () => {
    const res = await request(`${gw.url}/v1/chat/completions`, { method: 'GET' });
    await res.body.dump();
    expect(res.statusCode).toBe(401);
  });

  it('an unknown path is still a 404', async () => {
    const res = await request(`${gw.url}/v1/nope`, { method: 'GET', headers: gw.headers() });
    await res.body.dump();
    expect(res.statusCode).toBe(404);
  });
});

describe('the log line of a request whose client left', () => {
  it('says 499 when the client left mid-stream, keeping client_aborted', async () => {
    const trace = traceId('left');
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'])), hangAfter: 2 } });
    const ac = new AbortController();
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }),
      body: JSON.stringify({ ...CHAT, stream: true }),
      signal: ac.signal,
    });
    expect(res.statusCode).toBe(200);
    await new Promise<void>((resolve) => {
      res.body.on('data', (d: Buffer) => {
        if (String(d).includes('Hel')) resolve();
      });
    });
    ac.abort();
    res.body.on('error', () => undefined);
    const line = await logLine(gw, trace);
    expect(line.status).toBe(499);
    expect(line.client_aborted).toBe(true);
  });

  it('says 499 when the client left before any answer', async () => {
    const trace = traceId('left-early');
    fake.enqueue('/v1/chat/completions', { hang: true });
    const ac = new AbortController();
    const pending = request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }),
      body: JSON.stringify(CHAT),
      signal: ac.signal,
    }).catch(() => undefined);
    await fake.waitForRequests(1);
    ac.abort();
    await pending;
    const line = await logLine(gw, trace);
    expect(line.status).toBe(499);
    expect(line.client_aborted).toBe(true);
  });

  it('a completed request keeps its status and no client_aborted', async () => {
    const trace = traceId('stayed');
    const r = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }));
    expect(r.status).toBe(200);
    const line = await logLine(gw, trace);
    expect(line.status).toBe(200);
    expect(line.client_aborted).toBeUndefined();
  });
});

describe('error responses say what was tried', () => {
  it('a 429 after retries names the target and how many retries it made', async () => {
    const limited = { ...openAIError(429, 'Slow down'), headers: { 'retry-after-ms': '1' } };
    fake.enqueue('/v1/chat/completions', limited, limited, limited);
    const trace = traceId('429');
    const r = await post(
      withConfig(
        { strategy: { mode: 'fallback', on_status_codes: [500] }, targets: [target({ retry: { attempts: 2, use_retry_after_headers: true } }), target()] },
        { 'x-gateway-trace-id': trace },
      ),
    );
    expect(r.status).toBe(429);
    expect(fake.requests.length).toBe(3);
    expect(r.headers['x-gateway-provider']).toBe('openai');
    expect(r.headers['x-gateway-target']).toBe('config.targets[0]');
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('2');
    expect(r.headers['x-gateway-cache-status']).toBe('DISABLED');
    const line = await logLine(gw, trace);
    expect(line.target).toBe('config.targets[0]');
    expect(line.provider).toBe('openai');
  });

  it('an upstream 500 from the last fallback target names that target, and the cache miss', async () => {
    fake.enqueue('/v1/chat/completions', openAIError(500, 'boom'), openAIError(500, 'boom again'));
    const r = await post(
      withConfig({ cache: { mode: 'simple' }, strategy: { mode: 'fallback' }, targets: [target(), target({ name: 'backup' })] }),
      { ...CHAT, messages: [{ role: 'user', content: `unique ${traceId('500')}` }] },
    );
    expect(r.status).toBe(500);
    expect(r.json.error.message).toBe('boom again');
    expect(r.headers['x-gateway-provider']).toBe('openai');
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('0');
    expect(r.headers['x-gateway-cache-status']).toBe('MISS');
  });

  it('a 503 from an open circuit names the refused target', async () => {
    const cb = { cb_config: { failure_threshold: 1, cooldown_interval: 30000 } };
    // a key only this test uses, so the circuit is its own
    const config = target({ ...cb, api_key: 'sk-provider-key-for-the-circuit-test' });
    fake.enqueue('/v1/chat/completions', openAIError(500, 'down'));
    const first = await post(withConfig(config));
    expect(first.status).toBe(500);
    const r = await post(withConfig(config));
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe('circuit_open');
    expect(r.headers['retry-after']).toBeDefined();
    expect(r.headers['x-gateway-provider']).toBe('openai');
    expect(r.headers['x-gateway-target']).toBe('config');
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('0');
    expect(r.headers['x-gateway-cache-status']).toBe('DISABLED');
    expect(fake.requests.length).toBe(1);
  });

  it('an error before the pipeline carries none of the answer headers', async () => {
    const r = await post(viaHeaders(gw, fake.baseUrl), { model: 'gpt-4o-mini', messages: 'nope' });
    expect(r.status).toBe(400);
    expect(r.headers['x-gateway-trace-id']).toBeDefined();
    expect(r.headers['x-gateway-target']).toBeUndefined();
    expect(r.headers['x-gateway-cache-status']).toBeUndefined();
  });
});
