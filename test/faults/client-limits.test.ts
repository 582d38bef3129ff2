/**
 * Slow and idle client connections are cut: real sockets against an in-process
 * gateway with small limits. Each case asserts a bounded deadline, not an exact time: Node checks the
 * header and request limits every connectionsCheckingInterval (a quarter of the shorter limit here).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { connectionsCheckingIntervalMs } from '../../src/compose/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatChunks, FakeOpenAI, sseFrames } from '../fakes/openai-server.js';
import { chatContent, parseSse, viaHeaders } from '../http/_util.js';

const HEADERS_MS = 300;
const BODY_MS = 500;
const KEEP_ALIVE_MS = 300;
/** Scheduling slack on a shared 2-core machine; still far below "never". */
const SLACK_MS = 1500;

let gw: TestGateway;
let fake: FakeOpenAI;
let port: number;

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway({
    options: {
      'client-headers-timeout': String(HEADERS_MS),
      'client-body-timeout': String(BODY_MS),
      'keep-alive-timeout': String(KEEP_ALIVE_MS),
    },
  });
  port = Number(new URL(gw.url).port);
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

interface Cut {
  /** ms from connect to the socket's close. */
  afterMs: number;
  received: string;
}

/**
 * Connects, runs `talk` (which writes on its own schedule until the socket closes), and resolves
 * when the gateway closes the socket; rejects if it is still open after `boundMs`.
 */
function cutWithin(boundMs: number, talk: (s: net.Socket) => void): Promise<Cut> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let t0 = 0;
    let received = '';
    const bound = setTimeout(() => {
      s.destroy();
      reject(new Error(`the connection was still open after ${boundMs} ms`));
    }, boundMs);
    s.setEncoding('utf8');
    s.on('data', (d: string) => (received += d));
    s.on('error', () => undefined); // a reset is a cut too
    s.on('connect', () => {
      t0 = performance.now();
      talk(s);
    });
    s.on('close', () => {
      clearTimeout(bound);
      resolve({ afterMs: performance.now() - t0, received });
    });
  });
}

/** Writes `text` one byte per `everyMs` while the socket is open. */
function dribble(s: net.Socket, text: string, everyMs: number): void {
  let i = 0;
  const t = setInterval(() => {
    if (s.destroyed || i >= text.length) return void clearInterval(t);
    s.write(text[i++]!);
  }, everyMs);
  s.once('close', () => clearInterval(t));
}

describe('client connection limits', () => {
  it('checks the limits often enough to honour them (a quarter of the shorter limit, 25 ms to 1 s)', () => {
    expect(connectionsCheckingIntervalMs(HEADERS_MS, BODY_MS)).toBe(75);
    expect(connectionsCheckingIntervalMs(20_000, 60_000)).toBe(1000);
    expect(connectionsCheckingIntervalMs(40, 40)).toBe(25);
  });

  it('cuts a client that dribbles its header bytes', async () => {
    // 50 bytes a second would take 40 s to send these headers.
    const cut = await cutWithin(HEADERS_MS + SLACK_MS, (s) => dribble(s, `GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(2000)}\r\n\r\n`, 20));
    expect(cut.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('cuts a client that connects and sends nothing', async () => {
    const cut = await cutWithin(HEADERS_MS + SLACK_MS, () => undefined);
    expect(cut.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('cuts a client that sends its headers but its body slowly', async () => {
    const cut = await cutWithin(BODY_MS + SLACK_MS, (s) => {
      s.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 2000\r\nx-gateway-api-key: ${gw.key}\r\n` +
          `x-gateway-provider: openai\r\nx-gateway-custom-host: ${fake.baseUrl}\r\nauthorization: Bearer sk-x\r\n\r\n`,
      );
      dribble(s, 'x'.repeat(2000), 20);
    });
    // No answer was started (the route waits for the body): Node's 408, then the close.
    expect(cut.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(fake.requests).toHaveLength(0);
    // Headers came in time: it was the request limit, not the headers one, that cut it.
    expect(cut.afterMs).toBeGreaterThanOrEqual(BODY_MS - 50);
  });

  it('closes a kept-alive connection left idle after its answer (keep-alive limit plus the 1 s Node adds)', async () => {
    const cut = await cutWithin(KEEP_ALIVE_MS + 1000 + SLACK_MS, (s) => s.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(cut.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(cut.received).toContain('Keep-Alive: timeout=0'); // 300 ms, advertised in whole seconds
  });

  it('does not limit a streamed answer that lasts longer than every limit', async () => {
    const pieces = ['one', ' two', ' three', ' four', ' five', ' six'];
    const frames = sseFrames(chatChunks(pieces));
    // 9 frames 300 ms apart: 2.4 s, longer than the header, body and keep-alive limits (+1 s) together.
    fake.enqueue('/v1/chat/completions', { stream: { frames, gapMs: 300 } });
    const t0 = performance.now();
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: viaHeaders(gw, fake.baseUrl),
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    const text = await res.body.text();
    expect(performance.now() - t0).toBeGreaterThan(HEADERS_MS + BODY_MS + KEEP_ALIVE_MS + 1000);
    expect(res.statusCode).toBe(200);
    expect(chatContent(parseSse(text))).toBe(pieces.join(''));
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });
});
