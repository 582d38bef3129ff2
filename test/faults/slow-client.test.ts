/**
 * Clients that stop reading a large stream: the gateway must pass the backpressure on to the
 * provider instead of pulling the whole body into memory. A real `sluice serve` process (its RSS read
 * from /proc), a fake provider on port 0 that streams a 50 MB SSE body lazily and honours its own
 * socket's backpressure (so it can only send what the gateway reads), and raw-socket clients that
 * send the request and then pause their socket.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayProcess, PROCESS_KEY } from '../scale/_process.js';
import { startGateway } from '../helpers/gateway.js';

const MB = 1024 * 1024;
const STREAM_BYTES = 50 * MB;
const CLIENTS = 10;

/** The provider's stream: `data: {chunk}` frames of ~4 KiB, numbered, then [DONE]. Same bytes every time. */
function* frames(total: number): Generator<string> {
  const pad = 'x'.repeat(4000);
  let sent = 0;
  for (let i = 0; sent < total; i++) {
    const chunk = { id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `${i} ${pad}` }, finish_reason: null }] };
    const frame = `data: ${JSON.stringify(chunk)}\n\n`;
    sent += frame.length;
    yield frame;
  }
  yield `data: {"id":"chatcmpl-slow","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n`;
  yield 'data: [DONE]\n\n';
}

function expectedBody(total: number): { bytes: number; sha256: string } {
  const h = createHash('sha256');
  let bytes = 0;
  for (const f of frames(total)) {
    h.update(f);
    bytes += f.length;
  }
  return { bytes, sha256: h.digest('hex') };
}

/** A provider that writes only as fast as its socket takes the bytes, and counts what it wrote. */
class LazyStreamUpstream {
  readonly sent: number[] = [];
  /** Bytes of the next streams. */
  size = STREAM_BYTES;
  /** Called when a stream's connection closes before it was all written (the gateway aborted it). */
  onCut: (() => void) | undefined;
  private readonly server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const n = this.sent.push(0) - 1;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const it = frames(this.size);
      const pump = (): void => {
        for (let r = it.next(); !r.done; r = it.next()) {
          this.sent[n]! += r.value.length;
          if (!res.write(r.value)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => {
        res.off('drain', pump);
        if (!res.writableFinished) this.onCut?.();
      });
      pump();
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  total(): number {
    return this.sent.reduce((a, b) => a + b, 0);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** A client on a raw socket (HTTP/1.0, so the body is the bare SSE bytes up to the close). */
class RawClient {
  private readonly socket: net.Socket;
  private head = '';
  private headDone = false;
  private readonly hash = createHash('sha256');
  bodyBytes = 0;
  tail = '';
  status = 0;
  readonly ended: Promise<void>;

  constructor(port: number, upstream: string, extraHeaders: string[] = [], key = PROCESS_KEY) {
    const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'a long story' }] });
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.pause();
    this.socket.write(
      [
        'POST /v1/chat/completions HTTP/1.0',
        'host: 127.0.0.1',
        `x-gateway-api-key: ${key}`,
        'x-gateway-provider: openai',
        `x-gateway-custom-host: ${upstream}`,
        'authorization: Bearer sk-upstream',
        'content-type: application/json',
        `content-length: ${Buffer.byteLength(body)}`,
        ...extraHeaders,
        '',
        body,
      ].join('\r\n'),
    );
    this.socket.on('data', (b: Buffer) => this.take(b));
    this.ended = new Promise((res, rej) => {
      this.socket.on('end', () => res());
      this.socket.on('error', rej);
    });
  }

  private take(b: Buffer): void {
    if (!this.headDone) {
      this.head += b.toString('latin1');
      const i = this.head.indexOf('\r\n\r\n');
      if (i < 0) return;
      this.headDone = true;
      this.status = Number(this.head.slice(9, 12));
      b = Buffer.from(this.head.slice(i + 4), 'latin1');
    }
    this.hash.update(b);
    this.bodyBytes += b.length;
    this.tail = (this.tail + b.toString('latin1')).slice(-64);
  }

  /** Start reading. */
  resume(): void {
    this.socket.resume();
  }

  digest(): string {
    return this.hash.digest('hex');
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** `p`, or a rejection naming `what` after `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`${what}: not within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

/** Resolves once `value()` has not changed for `quietMs` (checked every 100 ms); rejects after `deadlineMs`. */
async function plateau(value: () => number, quietMs: number, deadlineMs: number): Promise<number> {
  const start = Date.now();
  let last = value();
  let since = Date.now();
  while (Date.now() - start < deadlineMs) {
    await new Promise((r) => setTimeout(r, 100));
    const v = value();
    if (v !== last) {
      last = v;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return v;
  }
  throw new Error(`no plateau within ${deadlineMs} ms (last ${last})`);
}

describe('clients that stop reading a large stream', () => {
  let gw: GatewayProcess;
  let upstream: LazyStreamUpstream;
  let upstreamUrl: string;
  let port: number;
  const clients: RawClient[] = [];

  beforeAll(async () => {
    upstream = new LazyStreamUpstream();
    upstreamUrl = await upstream.listen();
    gw = GatewayProcess.serve(['--port', '0']);
    const [line] = await gw.listening();
    port = line!.port;
  });

  afterAll(async () => {
    for (const c of clients) c.destroy();
    await gw?.stop();
    await upstream?.close();
  });

  it(`holds the provider back (bounded memory) while ${CLIENTS} clients of a 50 MB stream read nothing, then delivers every byte when they read`, async () => {
    const expected = expectedBody(STREAM_BYTES);
    const before = rssBytes(gw.pid);

    for (let i = 0; i < CLIENTS; i++) clients.push(new RawClient(port, upstreamUrl));
    // Every stream has started, then what the provider could send stops growing.
    await plateau(() => (upstream.sent.length === CLIENTS ? upstream.total() : -upstream.sent.length), 1500, 30_000);
    const growth = rssBytes(gw.pid) - before;
    const maxSent = Math.max(...upstream.sent);
    console.log(
      `${CLIENTS} non-reading clients of a ${STREAM_BYTES / MB} MB stream: gateway RSS ${before / MB | 0} MB → +${(growth / MB).toFixed(1)} MB; ` +
        `upstream sent ${(upstream.total() / CLIENTS / 1024) | 0} KB per client on average (max ${(maxSent / 1024) | 0} KB)`,
    );
    // Without backpressure the provider sends the whole 50 MB to each and the gateway holds it. With it,
    // what was sent sits in the kernel socket buffers of the two hops (loopback autotunes send buffers
    // up to 4 MiB each): ~8 MB measured here, none of it in the gateway.
    expect(maxSent).toBeLessThan(16 * MB);
    expect(growth).toBeLessThan(100 * MB);

    for (const c of clients) c.resume();
    await Promise.all(clients.map((c) => c.ended));
    for (const c of clients) {
      expect(c.status).toBe(200);
      expect(c.tail.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(c.bodyBytes).toBe(expected.bytes);
      expect(c.digest()).toBe(expected.sha256);
    }
  }, 90_000);

  it('a coalesced stream (one upstream call, cache on) goes on for a reading client while another sharing it reads nothing', async () => {
    upstream.size = 20 * MB;
    const expected = expectedBody(upstream.size);
    const calls = upstream.sent.length;
    const cache = ['x-gateway-cache-namespace: slow-client-shared', 'x-gateway-config: {"cache":{"mode":"simple","max_age":60}}'];
    const slow = new RawClient(port, upstreamUrl, cache);
    clients.push(slow);
    await plateau(() => upstream.sent.length - calls, 300, 10_000); // the slow client's call started
    const fast = new RawClient(port, upstreamUrl, cache);
    clients.push(fast);
    fast.resume();
    await within(fast.ended, 20_000, 'the reading client, stalled by the one that does not read');
    expect(upstream.sent.length - calls).toBe(1); // shared, not a second call
    expect(fast.digest()).toBe(expected.sha256);
    expect(fast.bodyBytes).toBe(expected.bytes);
    expect(slow.bodyBytes).toBeLessThan(MB); // it really did not read

    slow.resume();
    await slow.ended;
    expect(slow.tail.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(slow.digest()).toBe(expected.sha256);
  }, 60_000);

  it('cuts a client that takes nothing for --stream-idle-timeout, aborting its upstream call', async () => {
    upstream.size = 20 * MB;
    const gw2 = await startGateway({ options: { 'stream-idle-timeout': '300' } });
    try {
      const cut = new Promise<void>((r) => (upstream.onCut = r));
      const c = new RawClient(Number(new URL(gw2.url).port), upstreamUrl, [], gw2.key);
      clients.push(c);
      await within(cut, 10_000, 'the upstream call of a client that reads nothing, aborted');
      c.resume();
      await within(c.ended, 5000, 'the stalled client cut');
      expect(c.tail.endsWith('data: [DONE]\n\n')).toBe(false);
      await within(
        (async () => {
          while (!gw2.logs.some((l) => l.error?.code === 'request_timeout')) await new Promise((r) => setTimeout(r, 20));
        })(),
        5000,
        'the log line',
      );
      const line = gw2.logs.find((l) => l.error?.code === 'request_timeout')!;
      expect(line.client_aborted).not.toBe(true); // the gateway cut it
      expect(String(line.error.message)).toMatch(/client read nothing for 300 ms/);
    } finally {
      upstream.onCut = undefined;
      await gw2.close();
    }
  }, 30_000);
});
