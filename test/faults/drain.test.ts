/**
 * Graceful drain, through real sockets against an in-process gateway: during the
 * drain delay /ready answers 503 on a new connection; at the shutdown deadline a started stream ends
 * with an `event: error` frame and a request still waiting for its provider gets a 503 JSON answer.
 */
import http from 'node:http';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatChunks, FakeOpenAI, sseFrames } from '../fakes/openai-server.js';
import { parseSse, viaHeaders } from '../http/_util.js';

let fake: FakeOpenAI;
let gw: TestGateway | undefined;

beforeAll(async () => {
  fake = await FakeOpenAI.start();
});

afterEach(async () => {
  fake.reset();
  await gw?.close().catch(() => undefined);
  gw = undefined;
});

afterAll(async () => {
  await fake?.close();
});

const port = (g: TestGateway): number => Number(new URL(g.url).port);

interface Exchange {
  /** Resolves with the status and headers when they arrive. */
  head: Promise<http.IncomingMessage>;
  /** Resolves with everything received once the socket closes, whether the body completed or not. */
  closed: Promise<{ body: string; complete: boolean }>;
}

/** One request on a fresh connection (agent: false), read to the socket's close. */
function send(g: TestGateway, path: string, method = 'GET', headers: Record<string, string> = {}, body?: string): Exchange {
  let onHead!: (r: http.IncomingMessage) => void;
  let onErr!: (e: Error) => void;
  const head = new Promise<http.IncomingMessage>((resolve, reject) => ((onHead = resolve), (onErr = reject)));
  const closed = new Promise<{ body: string; complete: boolean }>((resolve) => {
    const req = http.request({ host: '127.0.0.1', port: port(g), path, method, headers, agent: false }, (res) => {
      onHead(res);
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('error', () => undefined);
      res.on('close', () => resolve({ body: text, complete: res.complete }));
    });
    req.on('error', (e) => {
      onErr(e);
      resolve({ body: '', complete: false });
    });
    req.end(body);
  });
  head.catch(() => undefined);
  return { head, closed };
}

const STREAM_CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
const CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

describe('shutdown drain', () => {
  it('answers /ready 503 on a new connection during the drain delay, then stops accepting', async () => {
    gw = await startGateway();
    const g = gw;
    expect((await send(g, '/ready').head).statusCode).toBe(200);
    const done = g.gateway.shutdown(5000, 400);
    const during = send(g, '/ready');
    const res = await during.head;
    expect(res.statusCode).toBe(503);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse((await during.closed).body)).toEqual({ status: 'draining' });
    await done;
    // After the delay the listener is closed: a new connection is refused.
    await expect(send(g, '/ready').head).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('at the deadline, ends a started stream with an event: error frame (shutting_down) before closing', async () => {
    gw = await startGateway();
    const g = gw;
    // The role chunk, then the provider goes quiet and never ends.
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['never'])), hangAfter: 1 } });
    const stream = send(g, '/v1/chat/completions', 'POST', viaHeaders(g, fake.baseUrl), STREAM_CHAT);
    expect((await stream.head).statusCode).toBe(200);
    const [upstream] = await fake.waitForRequests(1);
    await g.gateway.shutdown(300, 0);
    const { body, complete } = await stream.closed;
    const frames = parseSse(body);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    const last = frames.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data)).toMatchObject({ error: { code: 'shutting_down', type: 'server_error' } });
    expect(body).not.toContain('[DONE]');
    // The gateway ended the chunked body itself (terminating chunk sent), not a reset mid-way.
    expect(complete).toBe(true);
    // The provider call was aborted.
    await upstream!.closed;
    expect(upstream!.aborted).toBe(true);
  });

  it('at the deadline, answers a request still waiting for its provider with a 503 shutting_down JSON error', async () => {
    gw = await startGateway();
    const g = gw;
    fake.enqueue('/v1/chat/completions', { hang: true });
    const waiting = send(g, '/v1/chat/completions', 'POST', viaHeaders(g, fake.baseUrl), CHAT);
    const [upstream] = await fake.waitForRequests(1);
    await g.gateway.shutdown(300, 0);
    const res = await waiting.head;
    expect(res.statusCode).toBe(503);
    const { body } = await waiting.closed;
    expect(JSON.parse(body)).toMatchObject({ error: { code: 'shutting_down', type: 'server_error' }, trace_id: expect.any(String) });
    await upstream!.closed;
    expect(upstream!.aborted).toBe(true);
    const line = g.logs.find((l) => l.msg === 'request' && l.path === '/v1/chat/completions');
    expect(line).toMatchObject({ status: 503, error: { code: 'shutting_down' } });
    expect(line!.client_aborted).toBeUndefined(); // the gateway ended it, not the client
  });

  it('lets a stream that finishes before the deadline complete with [DONE]', async () => {
    gw = await startGateway();
    const g = gw;
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['a', 'b'])), gapMs: 60 } });
    const stream = send(g, '/v1/chat/completions', 'POST', viaHeaders(g, fake.baseUrl), STREAM_CHAT);
    await stream.head;
    await g.gateway.shutdown(5000, 0);
    const { body } = await stream.closed;
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(g.logs.some((l) => l.msg === 'shutdown deadline reached; closing remaining connections')).toBe(false);
  });
});
