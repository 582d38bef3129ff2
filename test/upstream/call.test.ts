import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom, lastValueFrom, toArray, type Subscription } from 'rxjs';
import { Agent, type Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { fromOpenAIError } from '../../src/providers/openai-compatible/from-provider.js';
import type { UpstreamRequest } from '../../src/providers/types.js';
import { callUpstream, type ErrorMapper, type UpstreamMessage } from '../../src/upstream/call.js';
import { createEgressDispatcher } from '../../src/security/egress.js';
import { CustomHostForbiddenError, HostGuard } from '../../src/security/host-guard.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A tiny scripted server: one handler per path, set by each test. */
const routes = new Map<string, Handler>();
let server: http.Server;
let origin: string;
let agent: Agent;
let dispatchers: Agent;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const h = routes.get(req.url ?? '');
    if (!h) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no route"}}');
      return;
    }
    h(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  agent = new Agent({ keepAliveTimeout: 1000 });
  dispatchers = agent;
});

afterEach(() => routes.clear());

afterAll(async () => {
  await agent.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function req(path: string, over: Partial<UpstreamRequest> = {}): UpstreamRequest {
  return {
    origin,
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"model":"m"}',
    stream: false,
    ...over,
  };
}

const mapError: ErrorMapper = (status, text, headers) => fromOpenAIError(status, text, headers);

/** Resolves with the error the observable ends with; rejects when it completes. */
function errorOf(o: ReturnType<typeof callUpstream>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    o.subscribe({ error: resolve, complete: () => reject(new Error('completed instead of erroring')) });
  });
}

/** A promise and its resolver (to script the server from the test, without sleeps). */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('callUpstream: whole bodies', () => {
  it('emits one body message for a 200 JSON answer, with status, headers and the request sent as given', async () => {
    let seen: { method?: string; body?: string; auth?: string } = {};
    routes.set('/v1/chat/completions', (rq, res) => {
      let body = '';
      rq.on('data', (c: Buffer) => (body += c.toString()));
      rq.on('end', () => {
        seen = { method: rq.method, body, auth: rq.headers.authorization };
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_1' }).end('{"id":"chatcmpl-1","ünï":"✓"}');
      });
    });
    const msgs = await lastValueFrom(
      callUpstream(dispatchers, req('/v1/chat/completions', { headers: { authorization: 'Bearer sk-fake' } }), mapError).pipe(toArray()),
    );
    expect(msgs).toHaveLength(1);
    const m = msgs[0]!;
    expect(m.type).toBe('body');
    expect(m.status).toBe(200);
    expect(m.type === 'body' && m.text).toBe('{"id":"chatcmpl-1","ünï":"✓"}');
    expect(m.headers['x-request-id']).toBe('req_1');
    expect(seen).toEqual({ method: 'POST', body: '{"model":"m"}', auth: 'Bearer sk-fake' });
  });

  it('joins a body sent in several writes, including a character split between writes', async () => {
    const bytes = Buffer.from('{"text":"🚀🚀"}');
    routes.set('/split', (_rq, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(bytes.subarray(0, 11));
      res.end(bytes.subarray(11));
    });
    const m = await firstValueFrom(callUpstream(dispatchers, req('/split'), mapError));
    expect(m.type === 'body' && m.text).toBe('{"text":"🚀🚀"}');
  });

  it('errors through the mapper with the status, text and headers of a non-2xx answer', async () => {
    routes.set('/fail', (_rq, res) => {
      res.writeHead(500, { 'content-type': 'application/json', 'retry-after': '3' }).end('{"error":{"message":"boom","type":"server_error"}}');
    });
    const mapper = vi.fn(mapError);
    const e = await errorOf(callUpstream(dispatchers, req('/fail'), mapper));
    expect(mapper).toHaveBeenCalledTimes(1);
    expect(mapper.mock.calls[0]![0]).toBe(500);
    expect(mapper.mock.calls[0]![1]).toBe('{"error":{"message":"boom","type":"server_error"}}');
    expect(mapper.mock.calls[0]![2]['retry-after']).toBe('3');
    expect(e).toBeInstanceOf(GatewayError);
    const g = e as GatewayError;
    expect(g.status).toBe(500);
    expect(g.message).toBe('boom');
    expect(g.headers).toEqual({ 'retry-after': '3' });
  });

  it('maps a non-2xx answer to a stream request through the mapper too (no events)', async () => {
    routes.set('/limited', (_rq, res) => {
      res.writeHead(429, { 'content-type': 'application/json' }).end('{"error":{"message":"slow down","code":"rate_limit_exceeded"}}');
    });
    const next = vi.fn();
    const e = await new Promise((resolve) =>
      callUpstream(dispatchers, req('/limited', { stream: true }), mapError).subscribe({ next, error: resolve }),
    );
    expect(next).not.toHaveBeenCalled();
    expect((e as GatewayError).status).toBe(429);
    expect((e as GatewayError).upstreamCode).toBe('rate_limit_exceeded');
  });

  it('emits a body (not events) when a stream request is answered with JSON', async () => {
    routes.set('/json-for-stream', (_rq, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"x"}');
    });
    const msgs = await lastValueFrom(callUpstream(dispatchers, req('/json-for-stream', { stream: true }), mapError).pipe(toArray()));
    expect(msgs.map((m) => m.type)).toEqual(['body']);
  });

  it('answers upstream_unreachable when the connection is refused', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const mapper = vi.fn(mapError);
    const e = await errorOf(callUpstream(dispatchers, req('/x', { origin: `http://127.0.0.1:${port}` }), mapper));
    expect(e).toBeInstanceOf(GatewayError);
    expect((e as GatewayError).code).toBe('upstream_unreachable');
    expect((e as GatewayError).status).toBe(502);
    // The socket's error code stays in the cause: in the message it would tell closed ports from open ones.
    expect((e as GatewayError).message).not.toContain('ECONNREFUSED');
    expect(((e as GatewayError).cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect(mapper).not.toHaveBeenCalled();
  });

  it('sends nothing until subscribed (cold)', async () => {
    const hit = vi.fn();
    routes.set('/cold', (_rq, res) => {
      hit();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    const o = callUpstream(dispatchers, req('/cold'), mapError);
    expect(hit).not.toHaveBeenCalled();
    await firstValueFrom(o);
    await firstValueFrom(o);
    expect(hit).toHaveBeenCalledTimes(2);
  });
});

describe('callUpstream: the host guard', () => {
  const refusing = (err: unknown): Dispatcher => ({ request: vi.fn(() => Promise.reject(err)) }) as unknown as Dispatcher;

  it('turns a host-guard refusal at connect time into custom_host_not_allowed', async () => {
    const ge = new GatewayError('custom_host_not_allowed', 'refused', { param: 'custom_host' });
    const wrapped = Object.assign(new Error('connect failed'), { cause: new CustomHostForbiddenError('evil.example', '10.0.0.1', ge) });
    const e = await errorOf(callUpstream(refusing(wrapped), req('/x'), mapError));
    expect(e).toBe(ge);
  });

  it('refuses a name resolving to loopback through a real guarded agent', async () => {
    // `localhost` is resolved at connect time by the guard's lookup: a loopback address is refused.
    const guardedAgent = createEgressDispatcher(new HostGuard({ trusted: [] }));
    try {
      const port = (server.address() as AddressInfo).port;
      const e = await errorOf(
        callUpstream(guardedAgent, req('/x', { origin: `http://localhost:${port}` }), mapError),
      );
      expect((e as GatewayError).code).toBe('custom_host_not_allowed');
    } finally {
      await guardedAgent.close();
    }
  });
});

describe('callUpstream: streams', () => {
  const sseHead = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

  it('emits event messages as they arrive, before the body ends', async () => {
    const sendRest = deferred();
    routes.set('/sse', (_rq, res) => {
      res.writeHead(200, sseHead);
      res.write(': keep-alive\n\ndata: {"n":1}\n\n');
      void sendRest.promise.then(() => {
        res.write('event: custom\ndata: {"n":2}\n\n');
        res.end('data: [DONE]\n\n');
      });
    });
    const got: UpstreamMessage[] = [];
    const done = new Promise<void>((resolve, reject) => {
      callUpstream(dispatchers, req('/sse', { stream: true }), mapError).subscribe({
        next: (m) => {
          got.push(m);
          // The first event reaches us while the server is still holding the rest back.
          if (got.length === 1) sendRest.resolve();
        },
        error: reject,
        complete: resolve,
      });
    });
    await done;
    expect(got.map((m) => (m.type === 'event' ? m.event : m.type))).toEqual([
      { data: '{"n":1}' },
      { event: 'custom', data: '{"n":2}' },
      { data: '[DONE]' },
    ]);
    expect(got.every((m) => m.status === 200 && m.type === 'event')).toBe(true);
    expect(got[0]!.headers['content-type']).toContain('text/event-stream');
  });

  it('aborts the upstream request when the subscriber unsubscribes mid-stream', async () => {
    const serverClosed = deferred<{ finished: boolean }>();
    routes.set('/hang', (_rq, res) => {
      res.writeHead(200, sseHead);
      res.write('data: {"n":1}\n\n');
      // Never ends on its own: only the client's abort closes it.
      res.on('close', () => serverClosed.resolve({ finished: res.writableEnded }));
    });
    const first = deferred();
    const next = vi.fn(() => first.resolve());
    const error = vi.fn();
    const complete = vi.fn();
    const sub: Subscription = callUpstream(dispatchers, req('/hang', { stream: true }), mapError).subscribe({ next, error, complete });
    await first.promise;
    sub.unsubscribe();
    await expect(serverClosed.promise).resolves.toEqual({ finished: false });
    expect(next).toHaveBeenCalledTimes(1);
    expect(error).not.toHaveBeenCalled();
    expect(complete).not.toHaveBeenCalled();
  });

  it('aborts a request still waiting for its response headers when unsubscribed', async () => {
    const arrived = deferred();
    const serverClosed = deferred<boolean>();
    routes.set('/slow-head', (_rq, res) => {
      res.on('close', () => serverClosed.resolve(res.headersSent));
      arrived.resolve();
    });
    const error = vi.fn();
    const sub = callUpstream(dispatchers, req('/slow-head'), mapError).subscribe({ error });
    await arrived.promise;
    sub.unsubscribe();
    await expect(serverClosed.promise).resolves.toBe(false);
    expect(error).not.toHaveBeenCalled();
  });

  it('errors with stream_interrupted when the socket is destroyed mid-stream', async () => {
    routes.set('/cut', (_rq, res) => {
      res.writeHead(200, sseHead);
      res.write('data: {"n":1}\n\n', () => res.socket?.destroy());
    });
    const got: UpstreamMessage[] = [];
    const e = await new Promise((resolve, reject) =>
      callUpstream(dispatchers, req('/cut', { stream: true }), mapError).subscribe({
        next: (m) => got.push(m),
        error: resolve,
        complete: () => reject(new Error('completed')),
      }),
    );
    expect(got).toHaveLength(1);
    expect(e).toBeInstanceOf(GatewayError);
    expect((e as GatewayError).code).toBe('stream_interrupted');
  });
});
