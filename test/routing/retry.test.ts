/**
 * Retry end to end: attempts, status codes, Retry-After headers and the request's time budget.
 * Waits are kept short with `retry-after-ms` headers; nothing asserts on elapsed time.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatChunks, FakeOpenAI, openAIError, sseFrames, type ScriptedResponse } from '../fakes/openai-server.js';
import { chat, chatContent, parseSse, STREAM_CHAT, target } from './helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const CHAT_PATH = '/v1/chat/completions';

let gw: TestGateway;
/** request-budget 1000 ms: a suggested wait beyond it is not made. */
let tight: TestGateway;
let a: FakeOpenAI;
let b: FakeOpenAI;

beforeAll(async () => {
  [a, b] = await Promise.all([FakeOpenAI.start(), FakeOpenAI.start()]);
  gw = await startGateway();
  tight = await startGateway({ options: { 'request-budget': '1000' } });
});

afterEach(() => {
  a.reset();
  b.reset();
});

afterAll(async () => {
  await gw?.close();
  await tight?.close();
  await a?.close();
  await b?.close();
});

const fail = (status: number, message: string, headers?: Record<string, string>): ScriptedResponse => ({
  ...openAIError(status, message),
  ...(headers ? { headers } : {}),
});
const FAST = { 'retry-after-ms': '1' };

describe('retry', () => {
  it('attempts 2 on 503, 503, 200 → 200 with x-gateway-retry-attempt-count 2', async () => {
    a.enqueue(CHAT_PATH, fail(503, 'down 1', FAST), fail(503, 'down 2', FAST));
    const r = await chat(gw, target(a, { retry: { attempts: 2, use_retry_after_headers: true } }));
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('2');
    expect(r.json.choices[0].message.content).toBe('echo: hi');
    expect(a.requests).toHaveLength(3);
    // Every attempt sends the same request.
    expect(new Set(a.requests.map((q) => q.rawBody)).size).toBe(1);
  });

  it('the real exponential backoff (no Retry-After) retries once: 503, 200 → 200, count 1', async () => {
    a.enqueue(CHAT_PATH, fail(503, 'down'));
    const r = await chat(gw, target(a, { retry: { attempts: 1 } }));
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('1');
    expect(a.requests).toHaveLength(2);
  });

  it('no retry needed: count 0', async () => {
    const r = await chat(gw, target(a, { retry: { attempts: 2 } }));
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('0');
    expect(a.requests).toHaveLength(1);
  });

  it('attempts are a cap: 1 + attempts tries, then the last error is returned', async () => {
    a.enqueue(CHAT_PATH, fail(503, 'down 1', FAST), fail(502, 'down 2', FAST), fail(500, 'down 3', FAST), fail(503, 'never', FAST));
    const r = await chat(gw, target(a, { retry: { attempts: 2, use_retry_after_headers: true } }));
    expect(r.status).toBe(500);
    expect(r.json.error.message).toContain('down 3');
    expect(a.requests).toHaveLength(3);
  });

  it('a 400 is not retried', async () => {
    a.enqueue(CHAT_PATH, fail(400, 'bad request', FAST));
    const r = await chat(gw, target(a, { retry: { attempts: 3, use_retry_after_headers: true } }));
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain('bad request');
    expect(a.requests).toHaveLength(1);
  });

  it('on_status_codes narrows the retried codes: [429] does not retry a 503', async () => {
    a.enqueue(CHAT_PATH, fail(503, 'down', FAST));
    const r = await chat(gw, target(a, { retry: { attempts: 2, on_status_codes: [429], use_retry_after_headers: true } }));
    expect(r.status).toBe(503);
    expect(a.requests).toHaveLength(1);
  });

  it('on_status_codes [429] does retry a 429', async () => {
    a.enqueue(CHAT_PATH, fail(429, 'busy', FAST));
    const r = await chat(gw, target(a, { retry: { attempts: 2, on_status_codes: [429], use_retry_after_headers: true } }));
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('1');
  });

  it('a stream is retried before its first chunk, and the client gets one clean stream', async () => {
    a.enqueue(CHAT_PATH, fail(503, 'down', FAST));
    const r = await chat(gw, target(a, { retry: { attempts: 1, use_retry_after_headers: true } }), { body: STREAM_CHAT });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('1');
    const frames = parseSse(r.text);
    expect(frames.some((f) => f.event === 'error')).toBe(false);
    expect(chatContent(frames)).toBe('Hello');
    expect(frames.at(-1)!.data).toBe('[DONE]');
  });

  it('a stream that fails after its first chunk is not retried', async () => {
    a.enqueue(CHAT_PATH, { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'])), cutAfter: 2 } });
    const r = await chat(gw, target(a, { retry: { attempts: 2, use_retry_after_headers: true } }), { body: STREAM_CHAT });
    expect(r.status).toBe(200);
    const frames = parseSse(r.text);
    expect(frames.at(-1)!.event).toBe('error');
    expect(a.requests).toHaveLength(1);
  });

  it('retries exhausted inside a fallback: the fallback then moves to the next target', async () => {
    a.enqueue(CHAT_PATH, fail(503, 'down 1', FAST), fail(503, 'down 2', FAST));
    const r = await chat(gw, {
      strategy: { mode: 'fallback' },
      targets: [target(a, { retry: { attempts: 1, use_retry_after_headers: true } }), target(b)],
    });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-target']).toBe('config.targets[1]');
    expect(a.requests).toHaveLength(2);
    expect(b.requests).toHaveLength(1);
  });
});

describe('Retry-After headers and the request budget (request-budget 1000 ms)', () => {
  it('retry-after-ms is read before retry-after: 1 ms is within the budget even with retry-after: 30', async () => {
    a.enqueue(CHAT_PATH, fail(429, 'busy', { 'retry-after-ms': '1', 'retry-after': '30' }));
    const r = await chat(tight, target(a, { retry: { attempts: 1, use_retry_after_headers: true } }));
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('1');
    expect(a.requests).toHaveLength(2);
  });

  it('retry-after-ms is honoured: a suggested 5000 ms wait is past the budget, so no retry', async () => {
    a.enqueue(CHAT_PATH, fail(503, 'down', { 'retry-after-ms': '5000' }));
    const r = await chat(tight, target(a, { retry: { attempts: 2, use_retry_after_headers: true } }));
    expect(r.status).toBe(503);
    expect(r.json.error.message).toContain('down');
    expect(a.requests).toHaveLength(1);
  });

  it('without use_retry_after_headers the same header is ignored and the short backoff retries', async () => {
    a.enqueue(CHAT_PATH, fail(503, 'down', { 'retry-after-ms': '5000' }));
    const r = await chat(tight, target(a, { retry: { attempts: 1 } }));
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-retry-attempt-count']).toBe('1');
    expect(a.requests).toHaveLength(2);
  });

  it('retry-after in seconds is honoured: retry-after: 0 retries', async () => {
    a.enqueue(CHAT_PATH, fail(429, 'busy', { 'retry-after': '0' }));
    const r = await chat(tight, target(a, { retry: { attempts: 1, use_retry_after_headers: true } }));
    expect(r.status).toBe(200);
    expect(a.requests).toHaveLength(2);
  });

  it('retry-after: 30 is beyond the budget: no retry, the 429 is returned', async () => {
    a.enqueue(CHAT_PATH, fail(429, 'slow down', { 'retry-after': '30' }));
    const r = await chat(tight, target(a, { retry: { attempts: 3, use_retry_after_headers: true } }));
    expect(r.status).toBe(429);
    expect(r.json.error.message).toContain('slow down');
    expect(a.requests).toHaveLength(1);
  });
});
