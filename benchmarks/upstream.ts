/**
 * A minimal, fast fake OpenAI upstream for benchmarks (node:http only, no frameworks).
 *
 *   POST .../chat/completions                 → fixed chat.completion JSON (≈330 bytes, with usage)
 *   POST .../chat/completions  {"stream":true} → SSE: N chat.completion.chunk events, then `data: [DONE]`
 *   GET  /healthz                             → 200 "ok"
 *
 * Stream shape: the path prefix /s/<chunks>/<intervalMs>/v1/chat/completions (it survives a gateway's
 * custom_host: x-gateway-custom-host: http://127.0.0.1:PORT/s/20/5/v1), else UPSTREAM_STREAM_CHUNKS
 * (default 20) chunks every UPSTREAM_STREAM_INTERVAL_MS (default 0: back to back). The first chunk is
 * written as soon as the request body has been read.
 *
 * Native provider routes (the streams-anthropic and streams-bedrock scenarios; the /s/ prefix shapes
 * their streams too: x-gateway-custom-host: http://127.0.0.1:PORT/s/20/0/v1 for Anthropic,
 * http://127.0.0.1:PORT/s/20/0 for Bedrock; credentials and signatures are not checked):
 *   POST .../v1/messages  {"stream":true}  → Anthropic Messages SSE: message_start, content_block_start,
 *                                            <chunks − 2> text deltas, content_block_stop, message_delta,
 *                                            message_stop (the client gets <chunks> chat chunks, as above)
 *   POST .../v1/messages                   → an Anthropic message JSON
 *   POST .../model/<id>/converse-stream    → Bedrock ConverseStream, application/vnd.amazon.eventstream
 *                                            frames (@smithy/eventstream-codec): messageStart,
 *                                            <chunks − 2> contentBlockDelta, contentBlockStop,
 *                                            messageStop, metadata
 *   POST .../model/<id>/converse           → a Converse JSON answer
 *
 * Env: UPSTREAM_PORT (default 0 = any free port), UPSTREAM_HOST (default 127.0.0.1).
 * Prints one line `listening <port>` on stdout once it accepts connections.
 * Run it pinned: taskset -c 1 node --import tsx benchmarks/upstream.ts
 */
import http from 'node:http';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { serveUntilSignalled } from './serve.js';

const PORT = Number(process.env.UPSTREAM_PORT ?? 0);
const HOST = process.env.UPSTREAM_HOST ?? '127.0.0.1';
const DEFAULT_CHUNKS = Number(process.env.UPSTREAM_STREAM_CHUNKS ?? 20);
const DEFAULT_INTERVAL = Number(process.env.UPSTREAM_STREAM_INTERVAL_MS ?? 0);

const CREATED = 1_700_000_000;
const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench0000000000000000000000',
    object: 'chat.completion',
    created: CREATED,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello! How can I help you today?' },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 },
  }),
);
const JSON_HEADERS = {
  'content-type': 'application/json',
  'content-length': String(COMPLETION.length),
};
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
};

function chunk(i: number, last: boolean): string {
  const delta = i === 0 ? { role: 'assistant', content: '' } : last ? {} : { content: ` tok${i}` };
  return `data: ${JSON.stringify({
    id: 'chatcmpl-bench0000000000000000000000',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: 'gpt-4o-mini-2024-07-18',
    system_fingerprint: 'fp_bench',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: last ? 'stop' : null }],
  })}\n\n`;
}
const USAGE_CHUNK = `data: ${JSON.stringify({
  id: 'chatcmpl-bench0000000000000000000000',
  object: 'chat.completion.chunk',
  created: CREATED,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [],
  usage: { prompt_tokens: 9, completion_tokens: 19, total_tokens: 28 },
})}\n\n`;
const DONE = 'data: [DONE]\n\n';

/** Chunk strings, cached per count (the last one carries finish_reason). */
const chunkCache = new Map<number, string[]>();
function chunksFor(n: number): string[] {
  let c = chunkCache.get(n);
  if (!c) {
    c = Array.from({ length: n }, (_, i) => chunk(i, i === n - 1));
    chunkCache.set(n, c);
  }
  return c;
}

const STREAM_RE = /"stream"\s*:\s*true/;
const INCLUDE_USAGE_RE = /"include_usage"\s*:\s*true/;
const PREFIX_RE = /^\/s\/(\d+)\/(\d+)(\/.*)$/;

function streamShape(url: string): { chunks: number; interval: number; path: string } {
  let chunks = DEFAULT_CHUNKS;
  let interval = DEFAULT_INTERVAL;
  let path = url;
  const m = PREFIX_RE.exec(path);
  if (m) {
    chunks = Number(m[1]);
    interval = Number(m[2]);
    path = m[3]!;
  }
  return { chunks: Math.max(1, Math.min(chunks, 100_000)), interval: Math.max(0, interval), path };
}

function sendStream(res: http.ServerResponse, chunks: number, interval: number, usage: boolean): void {
  const parts = chunksFor(chunks);
  res.writeHead(200, SSE_HEADERS);
  const finish = (): void => {
    if (usage) res.write(USAGE_CHUNK);
    res.end(DONE);
  };
  if (interval === 0) {
    for (const p of parts) res.write(p);
    finish();
    return;
  }
  let i = 0;
  res.write(parts[i++]!);
  const timer = setInterval(() => {
    if (res.destroyed) {
      clearInterval(timer);
      return;
    }
    if (i < parts.length) res.write(parts[i++]!);
    if (i >= parts.length) {
      clearInterval(timer);
      finish();
    }
  }, interval);
  res.on('close', () => clearInterval(timer));
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
    return;
  }
  const url = req.url ?? '/';
  if (req.method !== 'POST' || !url.includes('/chat/completions')) {
    const native = req.method === 'POST' ? nativeRoute(url) : undefined;
    if (native) {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => answerNative(res, native, url, parts));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
    return;
  }
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => answer(res, url, parts));
});

/** The normal answer (JSON completion or SSE stream) once the request body has been read. */
function answer(res: http.ServerResponse, url: string, parts: Buffer[]): void {
  const body = parts.length === 1 ? parts[0]!.toString('latin1') : Buffer.concat(parts).toString('latin1');
  if (body.includes('"stream"') && STREAM_RE.test(body)) {
    const { chunks, interval } = streamShape(url);
    sendStream(res, chunks, interval, INCLUDE_USAGE_RE.test(body));
    return;
  }
  res.writeHead(200, JSON_HEADERS);
  res.end(COMPLETION);
}

// ---------------------------------------------------------------------------------------------
// Native provider wire formats: Anthropic Messages (SSE) and Bedrock Converse (AWS event-stream)

type NativeRoute = 'anthropic' | 'bedrock' | 'bedrock-stream';
const CONVERSE_RE = /\/model\/[^/]+\/(converse|converse-stream)(\?|$)/;

function nativeRoute(url: string): NativeRoute | undefined {
  const q = url.indexOf('?');
  const path = q >= 0 ? url.slice(0, q) : url;
  if (path.endsWith('/v1/messages')) return 'anthropic';
  const m = CONVERSE_RE.exec(path);
  return m ? (m[1] === 'converse' ? 'bedrock' : 'bedrock-stream') : undefined;
}

const ANTHROPIC_MESSAGE = Buffer.from(
  JSON.stringify({
    id: 'msg_bench000000000000000000',
    type: 'message',
    role: 'assistant',
    model: 'claude-bench',
    content: [{ type: 'text', text: 'Hello! How can I help you today?' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 9, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  }),
);
const CONVERSE_ANSWER = Buffer.from(
  JSON.stringify({
    output: { message: { role: 'assistant', content: [{ text: 'Hello! How can I help you today?' }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: 9, outputTokens: 9, totalTokens: 18 },
    metrics: { latencyMs: 1 },
  }),
);
const sseEvent = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** An Anthropic stream whose translation gives `n` chat chunks: role, n − 2 text deltas, finish. */
function anthropicEvents(n: number): string[] {
  return [
    sseEvent('message_start', {
      message: { id: 'msg_bench000000000000000000', type: 'message', role: 'assistant', model: 'claude-bench', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } },
    }),
    sseEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ...Array.from({ length: Math.max(0, n - 2) }, (_, i) => sseEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ` tok${i + 1}` } })),
    sseEvent('content_block_stop', { index: 0 }),
    sseEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: n - 1 } }),
    sseEvent('message_stop', {}),
  ];
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
/** One ConverseStream event frame; payloads carry the `p` padding field Bedrock adds. */
function frame(type: string, payload: Record<string, unknown>): Buffer {
  const bytes = codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEF' })),
  });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A ConverseStream whose translation gives `n` chat chunks: role, n − 2 text deltas, finish (+ usage). */
function bedrockFrames(n: number): Buffer[] {
  return [
    frame('messageStart', { role: 'assistant' }),
    ...Array.from({ length: Math.max(0, n - 2) }, (_, i) => frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ` tok${i + 1}` } })),
    frame('contentBlockStop', { contentBlockIndex: 0 }),
    frame('messageStop', { stopReason: 'end_turn' }),
    frame('metadata', { usage: { inputTokens: 9, outputTokens: n - 1, totalTokens: n + 8 }, metrics: { latencyMs: 1 } }),
  ];
}

const nativeCache = new Map<string, (string | Buffer)[]>();
function nativeParts(kind: 'anthropic' | 'bedrock', n: number): (string | Buffer)[] {
  const key = `${kind}:${n}`;
  let parts = nativeCache.get(key);
  if (!parts) {
    parts = kind === 'anthropic' ? anthropicEvents(n) : bedrockFrames(n);
    nativeCache.set(key, parts);
  }
  return parts;
}
const EVENTSTREAM_HEADERS = { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'bench-0000' };

/** Writes the parts: the first at once, the rest back to back (interval 0) or every `interval` ms. */
function sendParts(res: http.ServerResponse, headers: http.OutgoingHttpHeaders, parts: readonly (string | Buffer)[], interval: number): void {
  res.writeHead(200, headers);
  if (interval === 0) {
    for (let i = 0; i < parts.length - 1; i++) res.write(parts[i]!);
    res.end(parts[parts.length - 1]);
    return;
  }
  let i = 0;
  res.write(parts[i++]!);
  const timer = setInterval(() => {
    if (res.destroyed || i >= parts.length) {
      clearInterval(timer);
      return;
    }
    if (i === parts.length - 1) {
      clearInterval(timer);
      res.end(parts[i++]);
    } else res.write(parts[i++]!);
  }, interval);
  res.on('close', () => clearInterval(timer));
}

function answerNative(res: http.ServerResponse, route: NativeRoute, url: string, parts: Buffer[]): void {
  const { chunks, interval } = streamShape(url);
  if (route === 'bedrock-stream') {
    sendParts(res, EVENTSTREAM_HEADERS, nativeParts('bedrock', chunks), interval);
    return;
  }
  if (route === 'anthropic') {
    const body = Buffer.concat(parts).toString('latin1');
    if (STREAM_RE.test(body)) {
      sendParts(res, SSE_HEADERS, nativeParts('anthropic', chunks), interval);
      return;
    }
  }
  const json = route === 'anthropic' ? ANTHROPIC_MESSAGE : CONVERSE_ANSWER;
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(json.length) });
  res.end(json);
}

// Keep connections from the gateway's pool and the load generator open for the whole run.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 125_000;
server.requestTimeout = 0;
server.maxRequestsPerSocket = 0;

serveUntilSignalled(server, PORT, HOST);
