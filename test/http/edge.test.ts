import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { PROVIDER_KEY, viaHeaders } from './_util.js';
import { jsonOrUndefined } from '../helpers/json.js';

let fake: FakeOpenAI;
let gw: TestGateway;
let smallGw: TestGateway;

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

/** Every status any request in this file got: none may be a 5xx. */
const statuses: number[] = [];

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway();
  smallGw = await startGateway({ options: { 'body-limit': '1kb' } });
});

afterAll(async () => {
  await gw?.close();
  await smallGw?.close();
  await fake?.close();
});

interface Sent {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

async function send(
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  target: TestGateway = gw,
): Promise<Sent> {
  const res = await request(`${target.url}${path}`, { method, headers, body });
  const text = await res.body.text();
  const parsed = jsonOrUndefined(text);
  statuses.push(res.statusCode);
  return { status: res.statusCode, headers: res.headers, text, body: parsed };
}

/** The OpenAI-style envelope, with a trace id equal to the response header. */
function expectEnvelope(r: Sent, status: number, code?: string): void {
  expect(r.status).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(r.body).toBeTypeOf('object');
  expect(r.body.error).toMatchObject({ message: expect.any(String), type: expect.any(String) });
  expect(r.body.error.message.length).toBeGreaterThan(0);
  expect('param' in r.body.error).toBe(true);
  expect(r.body.trace_id).toBe(r.headers['x-gateway-trace-id']);
  if (code) expect(r.body.error.code).toBe(code);
}

describe('invalid requests never reach the provider', () => {
  afterEach(() => {
    expect(fake.requests).toHaveLength(0);
    fake.reset();
  });

  describe('authentication', () => {
    it('a missing x-gateway-api-key is a 401 envelope', async () => {
      const headers = viaHeaders(gw, fake.baseUrl);
      delete headers['x-gateway-api-key'];
      const r = await send('POST', '/v1/chat/completions', headers, JSON.stringify(CHAT));
      expectEnvelope(r, 401, 'missing_gateway_key');
      expect(r.body.error.type).toBe('authentication_error');
    });

    it('a wrong x-gateway-api-key is a 401 envelope', async () => {
      const r = await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl, { 'x-gateway-api-key': 'sk-wrong-gateway-key-000000000' }), JSON.stringify(CHAT));
      expectEnvelope(r, 401, 'invalid_gateway_key');
      expect(r.body.error.type).toBe('authentication_error');
    });

    it('the provider bearer token is not a gateway key', async () => {
      const headers = viaHeaders(gw, fake.baseUrl, { 'x-gateway-api-key': PROVIDER_KEY });
      const r = await send('POST', '/v1/chat/completions', headers, JSON.stringify(CHAT));
      expectEnvelope(r, 401, 'invalid_gateway_key');
    });

    it('GET /v1/models needs the key too', async () => {
      const r = await send('GET', '/v1/models', { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl });
      expectEnvelope(r, 401, 'missing_gateway_key');
    });
  });

  describe('bodies the edge refuses', () => {
    it('malformed JSON is a 400 invalid_json', async () => {
      const r = await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl), '{"model": "gpt-4o-mini", "messages": [');
      expectEnvelope(r, 400, 'invalid_json');
    });

    it('an empty JSON body is a 400', async () => {
      const r = await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl), '');
      expectEnvelope(r, 400);
      // express.json reads an empty body as {}: either "empty" or "model is required" is a clear answer.
      expect(['invalid_json', 'invalid_request_body']).toContain(r.body.error.code);
    });

    it('a JSON body that is not an object is a 400 invalid_request_body', async () => {
      const r = await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl), '[1,2,3]');
      expectEnvelope(r, 400, 'invalid_request_body');
    });

    it('text/plain is a 415', async () => {
      const r = await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl, { 'content-type': 'text/plain' }), JSON.stringify(CHAT));
      expectEnvelope(r, 415, 'unsupported_media_type');
    });

    it('a body without a content type is a 415', async () => {
      const headers = viaHeaders(gw, fake.baseUrl);
      delete headers['content-type'];
      const r = await send('POST', '/v1/chat/completions', headers, JSON.stringify(CHAT));
      expectEnvelope(r, 415, 'unsupported_media_type');
    });

    it('a JSON body in a charset other than UTF-8 is a 415', async () => {
      const r = await send(
        'POST',
        '/v1/chat/completions',
        viaHeaders(gw, fake.baseUrl, { 'content-type': 'application/json; charset=latin1' }),
        JSON.stringify(CHAT),
      );
      expectEnvelope(r, 415, 'unsupported_media_type');
    });

    it('a body over the limit is a 413', async () => {
      const big = { ...CHAT, messages: [{ role: 'user', content: 'x'.repeat(4096) }] };
      const r = await send('POST', '/v1/chat/completions', viaHeaders(smallGw, fake.baseUrl), JSON.stringify(big), smallGw);
      expectEnvelope(r, 413, 'body_too_large');
      expect(r.body.error.message).toContain('1024');
    });

    it('a body just under the limit is accepted', async () => {
      const r = await send('POST', '/v1/chat/completions', viaHeaders(smallGw, fake.baseUrl), JSON.stringify(CHAT), smallGw);
      expect(r.status).toBe(200);
      await fake.waitForRequests(1);
      fake.reset(); // this one was meant to arrive
    });
  });

  describe('routes', () => {
    it('an unknown route under /v1 is a 404 envelope', async () => {
      const r = await send('POST', '/v1/does-not-exist', gw.headers(), '{}');
      expectEnvelope(r, 404, 'route_not_found');
      expect(r.body.error.message).toContain('/v1/does-not-exist');
    });

    it('an unknown route outside /v1 is a 404 envelope without a key', async () => {
      const r = await send('GET', '/nope', {});
      expectEnvelope(r, 404, 'route_not_found');
    });

    it('the wrong method on a known path is a 405 envelope', async () => {
      const r = await send('GET', '/v1/chat/completions', gw.headers());
      expectEnvelope(r, 405, 'method_not_allowed');
    });

    it('GET /health answers 200 without a key', async () => {
      const r = await send('GET', '/health', {});
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: 'ok' });
    });

    it('GET /ready answers 200 without a key', async () => {
      const r = await send('GET', '/ready', {});
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: 'ready' });
    });
  });

  describe('POST /v1/completions body validation', () => {
    const base = { model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' };
    const cases: [name: string, extra: Record<string, unknown>, param: string | RegExp][] = [
      ['best_of equal to n', { best_of: 2, n: 2 }, 'best_of'],
      ['best_of below n', { best_of: 1, n: 3 }, 'best_of'],
      ['best_of above 20', { best_of: 21 }, 'best_of'],
      ['best_of > 1 with stream', { best_of: 3, stream: true }, 'best_of'],
      ['5 stop sequences', { stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      ['logit_bias of 101', { logit_bias: { '50256': 101 } }, /^logit_bias/],
      ['logit_bias of -101', { logit_bias: { '50256': -101 } }, /^logit_bias/],
      ['logit_bias with a key that is not a token id', { logit_bias: { hello: 1 } }, /^logit_bias/],
      ['stream_options without stream', { stream_options: { include_usage: true } }, 'stream_options'],
      ['stream_options with stream: false', { stream: false, stream_options: { include_usage: true } }, 'stream_options'],
      ['logprobs above 5', { logprobs: 6 }, 'logprobs'],
      ['temperature above 2', { temperature: 2.5 }, 'temperature'],
      ['top_p above 1', { top_p: 1.5 }, 'top_p'],
      ['presence_penalty below -2', { presence_penalty: -3 }, 'presence_penalty'],
      ['n of 0', { n: 0 }, 'n'],
      ['max_tokens negative', { max_tokens: -1 }, 'max_tokens'],
      ['a prompt of mixed types', { prompt: ['a', 1] }, 'prompt[1]'],
      ['a prompt that is an object', { prompt: { text: 'x' } }, 'prompt'],
      ['no model', { model: undefined }, 'model'],
    ];
    for (const [name, extra, param] of cases) {
      it(`${name} → 400 naming ${String(param)}`, async () => {
        const body = JSON.stringify({ ...base, ...extra });
        const r = await send('POST', '/v1/completions', viaHeaders(gw, fake.baseUrl), body);
        expectEnvelope(r, 400, 'invalid_request_body');
        if (typeof param === 'string') expect(r.body.error.param).toBe(param);
        else expect(r.body.error.param).toMatch(param);
        expect(Array.isArray(r.body.issues)).toBe(true);
        expect(r.body.issues.length).toBeGreaterThan(0);
      });
    }

    it('the same limits at their edge are accepted', async () => {
      const body = {
        ...base,
        best_of: 3,
        n: 2,
        stop: ['a', 'b', 'c', 'd'],
        logit_bias: { '50256': 100, '1': -100 },
        logprobs: 5,
        stream: true,
        stream_options: { include_usage: false },
      };
      // best_of > 1 cannot stream: drop stream for the accepted case.
      const accepted = { ...body, stream: undefined, stream_options: undefined };
      const r = await send('POST', '/v1/completions', viaHeaders(gw, fake.baseUrl), JSON.stringify(accepted));
      expect(r.status).toBe(200);
      const [up] = await fake.waitForRequests(1);
      expect(up!.body).toMatchObject({ best_of: 3, n: 2, logit_bias: { '50256': 100, '1': -100 } });
      fake.reset();
    });
  });

  describe('other bodies', () => {
    it('a chat message with an unknown role is a 400 naming it', async () => {
      const r = await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl), JSON.stringify({ ...CHAT, messages: [{ role: 'robot', content: 'x' }] }));
      expectEnvelope(r, 400, 'invalid_request_body');
      expect(r.body.error.param).toBe('messages[0].role');
    });

    it('embeddings with an empty input is a 400 naming input', async () => {
      const r = await send('POST', '/v1/embeddings', viaHeaders(gw, fake.baseUrl), JSON.stringify({ model: 'text-embedding-3-small', input: '' }));
      expectEnvelope(r, 400, 'invalid_request_body');
      expect(r.body.error.param).toBe('input');
    });

    it('embeddings with an unknown encoding_format is a 400', async () => {
      const r = await send(
        'POST',
        '/v1/embeddings',
        viaHeaders(gw, fake.baseUrl),
        JSON.stringify({ model: 'text-embedding-3-small', input: 'x', encoding_format: 'int8' }),
      );
      expectEnvelope(r, 400, 'invalid_request_body');
      expect(r.body.error.param).toBe('encoding_format');
    });

    it('an invalid x-gateway-trace-id is a 400 naming the header, with a generated trace id', async () => {
      const r = await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': 'has space' }), JSON.stringify(CHAT));
      expectEnvelope(r, 400, 'invalid_header');
      expect(r.body.error.param).toBe('x-gateway-trace-id');
      expect(r.headers['x-gateway-trace-id']).not.toBe('has space');
    });
  });
});

describe('never a 5xx for a client mistake', () => {
  it('every status seen in this file above is below 500', () => {
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
  });
});

describe('no secret in the log', () => {
  it('the provider key, the gateway key and the Authorization value never appear in the log text', async () => {
    const auth = `Bearer ${PROVIDER_KEY}`;
    const inline = JSON.stringify({ provider: 'openai', custom_host: fake.baseUrl, api_key: PROVIDER_KEY });
    const chat = JSON.stringify(CHAT);
    // A request of every kind: success, stream, upstream error, timeout, validation, auth, config.
    await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl), chat);
    await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl), JSON.stringify({ ...CHAT, stream: true }));
    await send('POST', '/v1/completions', viaHeaders(gw, fake.baseUrl), JSON.stringify({ model: 'm', prompt: 'p' }));
    await send('POST', '/v1/embeddings', viaHeaders(gw, fake.baseUrl), JSON.stringify({ model: 'm', input: 'p' }));
    await send('GET', '/v1/models', viaHeaders(gw, fake.baseUrl));
    await send('POST', '/v1/chat/completions', gw.headers({ 'x-gateway-config': inline }), chat);
    fake.enqueue('/v1/chat/completions', openAIError(401, 'Incorrect API key provided.'));
    await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl), chat);
    fake.enqueue('/v1/chat/completions', { hang: true });
    await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl, { 'x-gateway-request-timeout': '50' }), chat);
    await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl), '{bad');
    await send('POST', '/v1/completions', viaHeaders(gw, fake.baseUrl), JSON.stringify({ model: 'm', prompt: 'p', best_of: 1, n: 1 }));
    await send('POST', '/v1/chat/completions', { ...viaHeaders(gw, fake.baseUrl), 'x-gateway-api-key': 'sk-wrong-gateway-key-000000000' }, chat);
    await send('POST', '/v1/chat/completions', gw.headers({ 'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: PROVIDER_KEY, nope: 1 }) }), chat);
    await send('POST', '/v1/chat/completions', gw.headers({ 'x-gateway-config': `{"api_key":"${PROVIDER_KEY}"` }), chat);
    await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl, { 'x-gateway-metadata': `{"k":"${'v'.repeat(2000)}"}` }), chat);
    await send('POST', '/v1/chat/completions', viaHeaders(gw, fake.baseUrl, { 'x-gateway-provider': 'nope' }), chat);
    await send('POST', '/v1/chat/completions', viaHeaders(smallGw, fake.baseUrl), JSON.stringify({ ...CHAT, pad: 'x'.repeat(4096) }), smallGw);
    await send('POST', '/v1/nope', gw.headers({ authorization: auth }), '{}');

    // Every request above has its line (lines are written on close, so wait for the count).
    await expect.poll(() => gw.logs.filter((l) => l.msg === 'request').length, { timeout: 5000, interval: 5 }).toBeGreaterThanOrEqual(16);
    await expect.poll(() => smallGw.logs.filter((l) => l.msg === 'request').length, { timeout: 5000, interval: 5 }).toBeGreaterThanOrEqual(1);
    for (const text of [gw.logText(), smallGw.logText()]) {
      expect(text.length).toBeGreaterThan(0);
      expect(text).not.toContain(PROVIDER_KEY);
      expect(text).not.toContain(TEST_KEY);
      expect(text).not.toContain('sk-wrong-gateway-key');
      expect(text).not.toContain(auth);
    }
  });
});
