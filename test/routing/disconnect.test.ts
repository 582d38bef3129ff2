/**
 * A client that goes away unsubscribes the plan, which aborts every upstream call in flight.
 */
import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatChunks, FakeOpenAI, sseFrames } from '../fakes/openai-server.js';
import { chat, CHAT, STREAM_CHAT, target } from './helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const CHAT_PATH = '/v1/chat/completions';

let gw: TestGateway;
let a: FakeOpenAI;
let b: FakeOpenAI;
let c: FakeOpenAI;

beforeAll(async () => {
  [a, b, c] = await Promise.all([FakeOpenAI.start(), FakeOpenAI.start(), FakeOpenAI.start()]);
  gw = await startGateway();
});

afterEach(() => {
  for (const f of [a, b, c]) f.reset();
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([a, b, c].map((f) => f?.close()));
});

/** Send a request with node:http so the test can destroy it at will; resolves with the response once headers arrive. */
function open(config: unknown, body: unknown = CHAT): { req: http.ClientRequest; response: Promise<http.IncomingMessage> } {
  const req = http.request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: gw.headers({ 'x-gateway-config': JSON.stringify(config) }),
  });
  const response = new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
  req.on('error', () => {}); // destroy() makes the request error with ECONNRESET
  req.end(JSON.stringify(body));
  return { req, response };
}

describe('client disconnect', () => {
  it('mid-race aborts every contender', async () => {
    a.enqueue(CHAT_PATH, { hang: true });
    b.enqueue(CHAT_PATH, { hang: true });
    const { req } = open({ strategy: { mode: 'race', hedge_after_ms: 0 }, targets: [target(a), target(b)] });
    const [[ra], [rb]] = await Promise.all([a.waitForRequests(1), b.waitForRequests(1)]);
    req.destroy();
    await Promise.all([ra!.closed, rb!.closed]);
    expect(ra!.aborted).toBe(true);
    expect(rb!.aborted).toBe(true);
  });

  it('mid-fallback aborts the target in flight and never starts the next one', async () => {
    a.enqueue(CHAT_PATH, { hang: true });
    const { req } = open({ strategy: { mode: 'fallback' }, targets: [target(a), target(b)] });
    const [ra] = await a.waitForRequests(1);
    req.destroy();
    await ra!.closed;
    expect(ra!.aborted).toBe(true);
    // The gateway is still healthy and b was never tried for the abandoned request.
    const r = await chat(gw, target(c));
    expect(r.status).toBe(200);
    expect(b.requests).toHaveLength(0);
  });

  it('mid-stream aborts the upstream stream', async () => {
    a.enqueue(CHAT_PATH, { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'])), hangAfter: 2 } });
    const { req, response } = open(target(a), STREAM_CHAT);
    const res = await response;
    expect(res.statusCode).toBe(200);
    // Wait for the first content to reach the client, then go away.
    await new Promise<void>((resolve) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (s: string) => {
        text += s;
        if (text.includes('Hel')) resolve();
      });
    });
    const [ra] = await a.waitForRequests(1);
    req.destroy();
    await ra!.closed;
    expect(ra!.aborted).toBe(true);
  });

  it('mid nested strategy (race inside a loadbalance) aborts every contender', async () => {
    a.enqueue(CHAT_PATH, { hang: true });
    b.enqueue(CHAT_PATH, { hang: true });
    const { req } = open({
      strategy: { mode: 'loadbalance' },
      targets: [{ strategy: { mode: 'race', hedge_after_ms: 0 }, targets: [target(a), target(b)] }],
    });
    const [[ra], [rb]] = await Promise.all([a.waitForRequests(1), b.waitForRequests(1)]);
    req.destroy();
    await Promise.all([ra!.closed, rb!.closed]);
    expect([ra!.aborted, rb!.aborted]).toEqual([true, true]);
  });
});
