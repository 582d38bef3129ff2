/**
 * An upstream that accepts and never answers, or goes silent mid-stream, is a timeout: 504 upstream_timeout (type timeout_error), retried like a 504; mid-stream the SSE error
 * event names upstream_timeout. Small limits, a scripted fake provider, real sockets.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatChunks, FakeOpenAI, sseFrames } from '../fakes/openai-server.js';
import { parseSse, PROVIDER_KEY, viaHeaders } from '../http/_util.js';

let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway({ options: { 'upstream-timeout': '300', 'stream-idle-timeout': '300' } });
});

afterEach(() => fake.reset());

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

function post(headers: Record<string, string>, body: unknown) {
  return request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify(body) });
}

describe('upstream timeouts', () => {
  it('an upstream that never sends its response headers is a 504 upstream_timeout, and the call is aborted', async () => {
    fake.enqueue('/v1/chat/completions', { hang: true });
    const res = await post(viaHeaders(gw, fake.baseUrl), CHAT);
    expect(res.statusCode).toBe(504);
    const body = (await res.body.json()) as any;
    expect(body.error).toMatchObject({ code: 'upstream_timeout', type: 'timeout_error' });
    const [upstream] = fake.requests;
    await upstream!.closed;
    expect(upstream!.aborted).toBe(true);
  });

  it('a stream whose first chunk never comes is a 504 JSON answer (not 408: no request_timeout was set)', async () => {
    fake.enqueue('/v1/chat/completions', { hang: true });
    const res = await post(viaHeaders(gw, fake.baseUrl), { ...CHAT, stream: true });
    expect(res.statusCode).toBe(504);
    expect(((await res.body.json()) as any).error.code).toBe('upstream_timeout');
  });

  it('a stream that goes silent mid-way ends with an event: error frame naming upstream_timeout, no [DONE]', async () => {
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'])), hangAfter: 2 } });
    const res = await post(viaHeaders(gw, fake.baseUrl), { ...CHAT, stream: true });
    expect(res.statusCode).toBe(200);
    const text = await res.body.text();
    const frames = parseSse(text);
    const last = frames.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data).error).toMatchObject({ code: 'upstream_timeout', type: 'timeout_error' });
    expect(text).not.toContain('[DONE]');
  });

  it('is retried like a 504: a hanging first attempt, then an answer', async () => {
    fake.enqueue('/v1/chat/completions', { hang: true });
    const config = { provider: 'openai', api_key: PROVIDER_KEY, custom_host: fake.baseUrl, retry: { attempts: 1 } };
    const res = await post(gw.headers({ 'x-gateway-config': JSON.stringify(config) }), CHAT);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-gateway-retry-attempt-count']).toBe('1');
    await res.body.json();
    expect(fake.requests).toHaveLength(2);
  });

  it('falls back to the next target when 504 is in on_status_codes', async () => {
    fake.enqueue('/v1/chat/completions', { hang: true });
    const target = { provider: 'openai', api_key: PROVIDER_KEY, custom_host: fake.baseUrl };
    const config = { strategy: { mode: 'fallback', on_status_codes: [504] }, targets: [target, target] };
    const res = await post(gw.headers({ 'x-gateway-config': JSON.stringify(config) }), CHAT);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-gateway-target']).toBe('config.targets[1]');
    await res.body.json();
  });
});
