import type { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatChunks, completionChunks, FakeOpenAI, openAIError, splitInsideUtf8, sseFrames } from '../fakes/openai-server.js';
import { chatContent, logLine, parseSse, traceId, viaHeaders, type SseFrame } from './_util.js';

let fake: FakeOpenAI;
let gw: TestGateway;

const STREAM_CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true };

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway();
});

afterEach(() => {
  fake.reset();
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

function post(headers: Record<string, string>, body: unknown = STREAM_CHAT, signal?: AbortSignal, path = '/v1/chat/completions') {
  return request(`${gw.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal });
}

/**
 * Reads a response body until `until(text)` holds and returns the text so far. The body is paused,
 * not destroyed, so the connection stays open until the test decides otherwise.
 */
function readUntil(body: Readable, until: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    body.setEncoding('utf8');
    const cleanup = (): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', reject);
    };
    const onData = (chunk: string): void => {
      text += chunk;
      if (until(text)) {
        cleanup();
        body.pause();
        resolve(text);
      }
    };
    const onEnd = (): void => {
      cleanup();
      reject(new Error(`the body ended before the condition held; got ${JSON.stringify(text)}`));
    };
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', reject);
  });
}

function dataFrames(frames: SseFrame[]): unknown[] {
  return frames.filter((f) => f.event === undefined && f.data !== '[DONE]').map((f) => JSON.parse(f.data));
}

describe('SSE re-encoding', () => {
  it('stream: true gives data frames ending in data: [DONE]', async () => {
    const trace = traceId('sse');
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }));
    const text = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.headers['x-gateway-provider']).toBe('openai');
    expect(res.headers['x-gateway-target']).toBe('config');
    expect(res.headers['x-gateway-trace-id']).toBe(trace);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const frames = parseSse(text); // throws on anything but `event:` / `data:` lines
    expect(frames.every((f) => f.event === undefined)).toBe(true);
    expect(frames.filter((f) => f.data === '[DONE]')).toHaveLength(1);
    expect(chatContent(frames)).toBe('Hello');
    for (const c of dataFrames(frames)) expect(c).toMatchObject({ object: 'chat.completion.chunk' });
    const [up] = await fake.waitForRequests(1);
    expect(up!.headers.accept).toBe('text/event-stream');
  });

  it('frames split inside UTF-8 characters, CRLF line ends and keep-alive comments are re-encoded cleanly', async () => {
    const chunks = chatChunks(['héllo ', '世界 ', '😀', ' naïve']);
    const frames = sseFrames(chunks, { crlf: true, comments: true });
    const pieces = splitInsideUtf8(frames);
    expect(pieces.length).toBeGreaterThan(frames.length); // really split inside characters
    fake.enqueue('/v1/chat/completions', { stream: { frames: pieces } });
    const res = await post(viaHeaders(gw, fake.baseUrl));
    const text = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(text).not.toContain('\r');
    expect(text).not.toContain('keep-alive');
    expect(text).not.toMatch(/^:/m);
    expect(text).not.toContain('\uFFFD');
    const out = parseSse(text);
    expect(chatContent(out)).toBe('héllo 世界 😀 naïve');
    expect(dataFrames(out)).toEqual(chunks);
    expect(out.at(-1)!.data).toBe('[DONE]');
  });

  it('an event whose JSON spans several data: lines is re-encoded as one data line', async () => {
    const chunk = chatChunks(['x'])[1]!;
    // The JSON of one event spread over two `data:` lines (valid SSE: joined with a newline).
    const json = JSON.stringify(chunk, null, 1);
    const frame = json.split('\n').map((l) => `data: ${l}\n`).join('') + '\n';
    fake.enqueue('/v1/chat/completions', { stream: { frames: [frame, 'data: [DONE]\n\n'] } });
    const res = await post(viaHeaders(gw, fake.baseUrl));
    const text = await res.body.text();
    const out = parseSse(text); // throws on a line that is neither `data:` nor `event:`
    expect(text.split('\n').filter((l) => l.startsWith('data: '))).toHaveLength(2);
    expect(dataFrames(out)).toEqual([chunk]);
    expect(out.at(-1)!.data).toBe('[DONE]');
  });

  it('legacy completions stream too', async () => {
    const res = await post(viaHeaders(gw, fake.baseUrl), { model: 'gpt-3.5-turbo-instruct', prompt: 'say', stream: true }, undefined, '/v1/completions');
    const text = await res.body.text();
    expect(res.statusCode).toBe(200);
    const out = parseSse(text);
    const texts = (dataFrames(out) as { choices: { text: string }[] }[]).flatMap((c) => c.choices.map((x) => x.text));
    expect(texts.join('')).toBe('Hello');
    expect(out.at(-1)!.data).toBe('[DONE]');
    expect(dataFrames(out)).toEqual(completionChunks(['Hel', 'lo']).map((c) => ({ ...c, id: expect.any(String), created: expect.any(Number), usage: null })));
  });
});

describe('chunks are written as they arrive', () => {
  it('the client has the first chunk while the upstream has not finished', async () => {
    const chunks = chatChunks(['first', 'never']);
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chunks), hangAfter: 2 } });
    const ac = new AbortController();
    const res = await post(viaHeaders(gw, fake.baseUrl), STREAM_CHAT, ac.signal);
    expect(res.statusCode).toBe(200);
    const [up] = await fake.waitForRequests(1);
    let upstreamClosed = false;
    void up!.closed.then(() => (upstreamClosed = true));
    const text = await readUntil(res.body, (t) => t.includes('"first"'));
    expect(chatContent(parseSse(text))).toBe('first');
    expect(text).not.toContain('never');
    expect(upstreamClosed).toBe(false); // the upstream is still hanging mid-stream
    ac.abort();
    await up!.closed;
  });
});

describe('failures mid-stream', () => {
  /** A stream that ended in an error event after `content`, without [DONE]: the event's payload. */
  function endedWithError(text: string, content: string): any {
    expect(text).not.toContain('[DONE]');
    const frames = parseSse(text);
    expect(chatContent(frames)).toBe(content);
    const last = frames.at(-1)!;
    expect(last.event).toBe('error');
    return JSON.parse(last.data);
  }

  it('a cut mid-stream ends the client stream with an error event and no [DONE]', async () => {
    const trace = traceId('cut');
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'])), cutAfter: 2 } });
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }));
    expect(res.statusCode).toBe(200);
    const err = endedWithError(await res.body.text(), 'Hel');
    expect(err.error.code).toBe('stream_interrupted');
    expect(err.trace_id).toBe(trace);
    const line = await logLine(gw, trace);
    expect(line.error).toMatchObject({ code: 'stream_interrupted' });
  });

  it('an upstream stream that ends without [DONE] ends with an error event', async () => {
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['Hel', 'lo']), { done: false }) } });
    const res = await post(viaHeaders(gw, fake.baseUrl));
    endedWithError(await res.body.text(), 'Hello');
  });

  it('an upstream error object mid-stream ends with an error event carrying its message', async () => {
    const chunks = chatChunks(['Hel', 'lo']);
    const events = [chunks[0]!, chunks[1]!, { error: { message: 'The server had an error while processing', type: 'server_error' } }, ...chunks.slice(2)];
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(events) } });
    const res = await post(viaHeaders(gw, fake.baseUrl));
    expect(endedWithError(await res.body.text(), 'Hel').error.message).toBe('The server had an error while processing');
  });

  it('an upstream error before the stream starts is a JSON error with the upstream status', async () => {
    fake.enqueue('/v1/chat/completions', openAIError(429, 'Slow down'));
    const res = await post(viaHeaders(gw, fake.baseUrl));
    const body = JSON.parse(await res.body.text());
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(body.error.message).toBe('Slow down');
  });

  it('a stream request answered with plain JSON is a 502', async () => {
    fake.enqueue('/v1/chat/completions', { json: { id: 'x', object: 'chat.completion', choices: [] } });
    const res = await post(viaHeaders(gw, fake.baseUrl));
    const body = JSON.parse(await res.body.text());
    expect(res.statusCode).toBe(502);
    expect(body.error.code).toBe('upstream_invalid_response');
  });
});

describe('client disconnect and timeouts', () => {
  it('a client disconnect mid-stream aborts the upstream request', async () => {
    const trace = traceId('disconnect');
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'])), hangAfter: 2 } });
    const ac = new AbortController();
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }), STREAM_CHAT, ac.signal);
    await readUntil(res.body, (t) => t.includes('"Hel"'));
    const [up] = await fake.waitForRequests(1);
    expect(up!.aborted).toBe(false);
    ac.abort();
    await up!.closed;
    expect(up!.aborted).toBe(true);
    const line = await logLine(gw, trace);
    expect(line.client_aborted).toBe(true);
  });

  it('a client disconnect before the first chunk aborts the upstream request', async () => {
    fake.enqueue('/v1/chat/completions', { hang: true });
    const ac = new AbortController();
    const pending = post(viaHeaders(gw, fake.baseUrl), STREAM_CHAT, ac.signal);
    const [up] = await fake.waitForRequests(1);
    ac.abort();
    await expect(pending).rejects.toThrow();
    await up!.closed;
    expect(up!.aborted).toBe(true);
  });

  it('request_timeout elapsing before the first chunk is a 408 JSON answer and the upstream is aborted', async () => {
    // Headers arrive, but no chunk ever does.
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['x'])), hangAfter: 0 } });
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-request-timeout': '150' }));
    const text = await res.body.text();
    expect(res.statusCode).toBe(408);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(text);
    expect(body.error.type).toBe('timeout_error');
    const [up] = await fake.waitForRequests(1);
    await up!.closed;
    expect(up!.aborted).toBe(true);
  });

  it('request_timeout does not cut a stream whose first chunk arrived in time', async () => {
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['a', 'b', 'c'])), gapMs: 80 } });
    // The whole stream takes > 300 ms; only its first chunk is bounded by the 250 ms.
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-request-timeout': '250' }));
    const frames = parseSse(await res.body.text());
    expect(chatContent(frames)).toBe('abc');
    expect(frames.at(-1)!.data).toBe('[DONE]');
  });
});

describe('usage', () => {
  it('hides the injected usage chunk when the client did not ask for usage, and logs the usage', async () => {
    const trace = traceId('usage-hidden');
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }));
    const frames = parseSse(await res.body.text());
    const [up] = await fake.waitForRequests(1);
    // The gateway asked for usage on the client's behalf...
    expect(up!.body.stream_options).toEqual({ include_usage: true });
    // ...and the usage-only chunk (choices: []) never reaches the client.
    const chunks = dataFrames(frames) as { choices: unknown[]; usage?: unknown }[];
    expect(chunks.length).toBe(4); // role, 'Hel', 'lo', finish
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(chunks.some((c) => c.usage != null)).toBe(false);
    expect(frames.at(-1)!.data).toBe('[DONE]');
    const line = await logLine(gw, trace);
    expect(line.usage).toEqual({ prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 });
    expect(line.stream).toBe(true);
  });

  it('shows the usage chunk when the client asked with stream_options.include_usage', async () => {
    const trace = traceId('usage-shown');
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }), { ...STREAM_CHAT, stream_options: { include_usage: true } });
    const frames = parseSse(await res.body.text());
    const chunks = dataFrames(frames) as { choices: unknown[]; usage?: unknown }[];
    expect(chunks.length).toBe(5);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } });
    const line = await logLine(gw, trace);
    expect(line.usage).toEqual({ prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 });
  });

  it('a client that says include_usage: false is still counted: the gateway asks anyway and hides the chunk', async () => {
    const trace = traceId('usage-false');
    const res = await post(viaHeaders(gw, fake.baseUrl, { 'x-gateway-trace-id': trace }), { ...STREAM_CHAT, stream_options: { include_usage: false } });
    const frames = parseSse(await res.body.text());
    const [up] = await fake.waitForRequests(1);
    expect(up!.body.stream_options).toEqual({ include_usage: true });
    const chunks = dataFrames(frames) as { choices: unknown[]; usage?: unknown }[];
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(chunks.some((c) => c.usage != null)).toBe(false);
    const line = await logLine(gw, trace);
    expect(line.usage).toEqual({ prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 });
  });
});
