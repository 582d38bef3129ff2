import http from 'node:http';
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import {
  FakeOpenAI,
  chatChunks,
  chatCompletion,
  openAIError,
  splitInsideUtf8,
  sseFrames,
  type RecordedRequest,
} from './openai-server.js';

let fake: FakeOpenAI;
let agent: Agent;

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  agent = new Agent({ keepAliveTimeout: 10_000 });
});

afterEach(() => {
  fake.reset();
});

afterAll(async () => {
  await fake.close();
  await agent.close();
});

async function post(path: string, body: unknown, signal?: AbortSignal) {
  return request(`${fake.origin}${path}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

async function get(path: string) {
  return request(`${fake.origin}${path}`, { method: 'GET', dispatcher: agent });
}

/** Data payloads of an SSE body (comments and blank lines dropped; CRLF or LF). */
function sseData(text: string): string[] {
  return text
    .split(/\r?\n/)
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice('data: '.length));
}

/** True if `buf` ends in the middle of a multi-byte UTF-8 sequence. */
function endsWithIncompleteUtf8(buf: Buffer): boolean {
  for (let back = 1; back <= Math.min(4, buf.length); back++) {
    const b = buf[buf.length - back];
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return len > back;
  }
  return false;
}

function decodeBase64Floats(b64: string): number[] {
  const bytes = Buffer.from(b64, 'base64');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let i = 0; i < bytes.byteLength; i += 4) out.push(view.getFloat32(i, true));
  return out;
}

describe('FakeOpenAI built-in defaults', () => {
  it('POST /v1/chat/completions (non-stream) echoes the last user message with usage', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'hello there' }] },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toMatch(/\S/);
    expect(res.headers['connection']).not.toBe('close');
    const body: any = await res.body.json();
    expect(body.object).toBe('chat.completion');
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(body.model).toBe('gpt-4o-mini');
    expect(typeof body.created).toBe('number');
    expect(body.choices).toHaveLength(1);
    expect(body.choices[0]).toMatchObject({
      index: 0,
      message: { role: 'assistant', content: 'echo: hello there' },
      finish_reason: 'stop',
    });
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);

    const [rec] = await fake.waitForRequests(1);
    expect(rec.method).toBe('POST');
    expect(rec.path).toBe('/v1/chat/completions');
    expect(rec.headers.authorization).toBe('Bearer sk-test');
    expect(rec.body.messages).toHaveLength(4);
    expect(JSON.parse(rec.rawBody)).toEqual(rec.body);
    await rec.closed;
    expect(rec.aborted).toBe(false);
  });

  it('POST /v1/chat/completions (stream) sends role, pieces, finish and [DONE]', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.headers['x-request-id']).toMatch(/\S/);
    const data = sseData(await res.body.text());
    expect(data[data.length - 1]).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks).toHaveLength(4);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(c).not.toHaveProperty('usage');
    }
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks.slice(1, 3).map((c) => c.choices[0].delta.content)).toEqual(['Hel', 'lo']);
    expect(chunks[3].choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks.slice(0, 3).every((c) => c.choices[0].finish_reason === null)).toBe(true);
  });

  it('POST /v1/chat/completions (stream, include_usage) adds a usage chunk with empty choices', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    const data = sseData(await res.body.text());
    expect(data[data.length - 1]).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks).toHaveLength(5);
    const last = chunks[4];
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: 2, total_tokens: expect.any(Number) });
    for (const c of chunks.slice(0, 4)) expect(c.usage).toBeNull();
  });

  it('POST /v1/completions answers text_completion, and streams text chunks', async () => {
    const res = await post('/v1/completions', { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi' });
    expect(res.statusCode).toBe(200);
    const body: any = await res.body.json();
    expect(body.object).toBe('text_completion');
    expect(body.choices[0]).toEqual({ text: 'echo: Say hi', index: 0, logprobs: null, finish_reason: 'stop' });
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);

    const sres = await post('/v1/completions', { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi', stream: true });
    expect(sres.headers['content-type']).toMatch(/^text\/event-stream/);
    const data = sseData(await sres.body.text());
    expect(data[data.length - 1]).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.every((c) => c.object === 'text_completion')).toBe(true);
    expect(chunks.map((c) => c.choices[0].text).join('')).toBe('Hello');
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('stop');
  });

  it('POST /v1/embeddings returns one deterministic 8-float embedding per input', async () => {
    const res = await post('/v1/embeddings', { model: 'text-embedding-3-small', input: ['a', 'b', 'a'] });
    expect(res.statusCode).toBe(200);
    const body: any = await res.body.json();
    expect(body.object).toBe('list');
    expect(body.model).toBe('text-embedding-3-small');
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(body.data.map((d: any) => [d.object, d.index])).toEqual([
      ['embedding', 0],
      ['embedding', 1],
      ['embedding', 2],
    ]);
    for (const d of body.data) {
      expect(d.embedding).toHaveLength(8);
      expect(d.embedding.every((x: unknown) => typeof x === 'number' && Number.isFinite(x))).toBe(true);
    }
    expect(body.data[0].embedding).toEqual(body.data[2].embedding);
    expect(body.data[0].embedding).not.toEqual(body.data[1].embedding);

    const single: any = await (await post('/v1/embeddings', { model: 'm', input: 'a' })).body.json();
    expect(single.data).toHaveLength(1);
    expect(single.data[0].embedding).toEqual(body.data[0].embedding);
  });

  it('base64 embeddings decode (little-endian float32) to the same floats as the float variant', async () => {
    const input = ['héllo', 'world'];
    const floats: any = await (await post('/v1/embeddings', { model: 'm', input, encoding_format: 'float' })).body.json();
    const b64: any = await (await post('/v1/embeddings', { model: 'm', input, encoding_format: 'base64' })).body.json();
    expect(b64.data).toHaveLength(2);
    for (let i = 0; i < 2; i++) {
      expect(typeof b64.data[i].embedding).toBe('string');
      expect(Buffer.from(b64.data[i].embedding, 'base64')).toHaveLength(8 * 4);
      expect(decodeBase64Floats(b64.data[i].embedding)).toEqual(floats.data[i].embedding);
    }
  });

  it('GET /v1/models lists the fake models', async () => {
    const res = await get('/v1/models');
    expect(res.statusCode).toBe(200);
    const body: any = await res.body.json();
    expect(body.object).toBe('list');
    expect(body.data).toEqual([
      { id: 'gpt-4o-mini', object: 'model', created: 1700000000, owned_by: 'openai' },
      { id: 'text-embedding-3-small', object: 'model', created: 1700000000, owned_by: 'openai' },
    ]);
  });

  it('unknown paths get a 404 with an OpenAI error body', async () => {
    const res = await post('/v1/nope', {});
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-request-id']).toMatch(/\S/);
    const body: any = await res.body.json();
    expect(body.error).toMatchObject({ message: expect.any(String), type: 'invalid_request_error', param: null });
    expect(body.error).toHaveProperty('code');

    const wrongMethod = await get('/v1/chat/completions');
    expect(wrongMethod.statusCode).toBe(404);
    await wrongMethod.body.dump();
  });
});

describe('FakeOpenAI scripting', () => {
  it('enqueue is FIFO per path, then falls back to the default; every request is recorded', async () => {
    fake.enqueue('/v1/chat/completions', { json: chatCompletion('one') }, { json: chatCompletion('two') });
    fake.enqueue('/v1/chat/completions', openAIError(429, 'slow down'));
    const msg = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] };

    const contents: string[] = [];
    for (let i = 0; i < 2; i++) {
      const body: any = await (await post('/v1/chat/completions', msg)).body.json();
      contents.push(body.choices[0].message.content);
    }
    const limited = await post('/v1/chat/completions', msg);
    expect(limited.statusCode).toBe(429);
    const err: any = await limited.body.json();
    expect(err.error).toEqual({ message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' });
    const fallback: any = await (await post('/v1/chat/completions', msg)).body.json();
    contents.push(fallback.choices[0].message.content);

    expect(contents).toEqual(['one', 'two', 'echo: ping']);
    const recs = await fake.waitForRequests(4);
    expect(recs).toHaveLength(4);
    expect(recs.every((r) => r.path === '/v1/chat/completions')).toBe(true);
  });

  it('setDefault replaces the built-in default (handler or fixed response); reset restores it', async () => {
    fake.setDefault('/v1/chat/completions', (req) => ({
      status: 201,
      headers: { 'x-custom': 'yes' },
      json: chatCompletion(`custom for ${req.body.model}`, { model: req.body.model }),
    }));
    const res = await post('/v1/chat/completions', { model: 'm1', messages: [] });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-custom']).toBe('yes');
    const body: any = await res.body.json();
    expect(body.choices[0].message.content).toBe('custom for m1');

    fake.setDefault('/v1/models', { raw: 'plain text', headers: { 'Content-Type': 'text/plain' } });
    const raw = await get('/v1/models');
    expect(raw.headers['content-type']).toBe('text/plain');
    expect(await raw.body.text()).toBe('plain text');

    fake.reset();
    expect(fake.requests).toHaveLength(0);
    const back: any = await (await get('/v1/models')).body.json();
    expect(back.object).toBe('list');
  });

  it('keeps connections alive between requests', async () => {
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const reused: boolean[] = [];
      for (let i = 0; i < 2; i++) {
        const req = http.request(`${fake.origin}/v1/models`, { agent: keepAlive });
        req.end();
        const [res] = (await once(req, 'response')) as [http.IncomingMessage];
        expect(res.headers.connection).not.toBe('close');
        res.resume();
        await once(res, 'end');
        reused.push(req.reusedSocket);
      }
      expect(reused).toEqual([false, true]);
    } finally {
      keepAlive.destroy();
    }
  });

  it('a stream script with CRLF and comments arrives byte-for-byte', async () => {
    const frames = sseFrames(chatChunks(['héllo', ' wörld 🎉']), { crlf: true, comments: true });
    expect(frames.join('')).toContain(': keep-alive\r\n\r\n');
    expect(frames.join('')).not.toMatch(/[^\r]\n/);
    expect(frames[frames.length - 1]).toBe('data: [DONE]\r\n\r\n');
    fake.enqueue('/v1/chat/completions', { stream: { frames } });

    const res = await post('/v1/chat/completions', { stream: true, messages: [] });
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const received = Buffer.from(await res.body.arrayBuffer());
    expect(received.equals(Buffer.from(frames.join(''), 'utf8'))).toBe(true);
  });

  it('sseFrames honours done: false and string events', () => {
    const frames = sseFrames(['{"error":{"message":"boom"}}', { a: 1 }], { done: false });
    expect(frames).toEqual(['data: {"error":{"message":"boom"}}\n\n', 'data: {"a":1}\n\n']);
  });

  it('gapMs spaces the frames out', async () => {
    const frames = sseFrames([{ n: 1 }, { n: 2 }, { n: 3 }]);
    fake.enqueue('/v1/chat/completions', { stream: { frames, gapMs: 30 } });
    const started = performance.now();
    const res = await post('/v1/chat/completions', {});
    const text = await res.body.text();
    const elapsed = performance.now() - started;
    expect(text).toBe(frames.join(''));
    // 4 frames => 3 gaps of 30 ms (allow for timer rounding).
    expect(elapsed).toBeGreaterThanOrEqual(3 * 30 - 5);
  });

  it('splitInsideUtf8 splits inside a multi-byte character and the concatenation decodes back', async () => {
    const frames = sseFrames(chatChunks(['café', ' 🎉 ok']));
    const original = frames.join('');
    const parts = splitInsideUtf8(frames);
    expect(parts.length).toBeGreaterThan(frames.length);
    expect(parts.some((b) => endsWithIncompleteUtf8(b))).toBe(true);
    const fatal = new TextDecoder('utf-8', { fatal: true });
    expect(() => parts.forEach((p) => fatal.decode(p))).toThrow();
    expect(Buffer.concat(parts).toString('utf8')).toBe(original);
    expect(() => splitInsideUtf8(['data: ascii only\n\n'])).toThrow();

    // The split frames go over the wire unchanged.
    fake.enqueue('/v1/chat/completions', { stream: { frames: parts } });
    const res = await post('/v1/chat/completions', {});
    expect(Buffer.from(await res.body.arrayBuffer()).toString('utf8')).toBe(original);
  });

  it('cutAfter destroys the socket: the client sees an error after the first frames', async () => {
    const frames = sseFrames(chatChunks(['a', 'b', 'c']));
    fake.enqueue('/v1/chat/completions', { stream: { frames, cutAfter: 2 } });
    const res = await post('/v1/chat/completions', {});
    expect(res.statusCode).toBe(200);
    const got: Buffer[] = [];
    let error: unknown;
    try {
      for await (const chunk of res.body) got.push(chunk as Buffer);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(Error);
    expect(Buffer.concat(got).toString('utf8')).toBe(frames[0] + frames[1]);
    const [rec] = await fake.waitForRequests(1);
    await rec.closed;
    expect(rec.aborted).toBe(false); // the server cut it, not the client

    // The server keeps serving after a cut.
    const ok = await get('/v1/models');
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
  });

  it('hang + client abort sets aborted and resolves closed', async () => {
    fake.enqueue('/v1/chat/completions', { hang: true });
    const ac = new AbortController();
    const pending = post('/v1/chat/completions', { model: 'x', messages: [] }, ac.signal);
    const [rec] = await fake.waitForRequests(1);
    expect(rec.aborted).toBe(false);
    let closedYet = false;
    void rec.closed.then(() => (closedYet = true));
    await Promise.resolve();
    expect(closedYet).toBe(false);
    ac.abort();
    await expect(pending).rejects.toThrow();
    await rec.closed;
    expect(rec.aborted).toBe(true);
  });

  it('hangAfter sends some frames then stalls until the client aborts', async () => {
    const frames = sseFrames(chatChunks(['a', 'b']));
    fake.enqueue('/v1/chat/completions', { stream: { frames, hangAfter: 1 } });
    const ac = new AbortController();
    const res = await post('/v1/chat/completions', {}, ac.signal);
    const it = res.body[Symbol.asyncIterator]();
    const first = await it.next();
    expect(Buffer.from(first.value as Buffer).toString('utf8')).toBe(frames[0]);
    const [rec] = fake.requests as RecordedRequest[];
    ac.abort();
    await expect(it.next()).rejects.toThrow();
    await rec.closed;
    expect(rec.aborted).toBe(true);
  });

  it('delayMs holds the headers back', async () => {
    fake.enqueue('/v1/models', { delayMs: 60, json: { ok: true } });
    const started = performance.now();
    const res = await get('/v1/models');
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    expect(await res.body.json()).toEqual({ ok: true });
  });

  it('waitForRequests rejects on timeout and resolves on arrival', async () => {
    await expect(fake.waitForRequests(1, 20)).rejects.toThrow(/timed out/);
    const waiting = fake.waitForRequests(2, 5000);
    await (await get('/v1/models')).body.dump();
    await (await get('/v1/models')).body.dump();
    const recs = await waiting;
    expect(recs.map((r) => r.path)).toEqual(['/v1/models', '/v1/models']);
  });
});

describe('FakeOpenAI.close', () => {
  it('closes in-flight connections and the server', async () => {
    const own = await FakeOpenAI.start();
    own.enqueue('/v1/chat/completions', { hang: true });
    const pending = request(`${own.baseUrl}/chat/completions`, {
      method: 'POST',
      body: '{}',
      dispatcher: agent,
    });
    const [rec] = await own.waitForRequests(1);
    await own.close();
    await expect(pending).rejects.toThrow();
    await rec.closed;
    await expect(request(`${own.origin}/v1/models`, { dispatcher: agent })).rejects.toThrow();
  });
});
