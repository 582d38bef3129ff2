/**
 * A scriptable fake of the OpenAI HTTP API for integration tests.
 *
 * A real `node:http` server on 127.0.0.1 (ephemeral port) that speaks the OpenAI wire format.
 * Every request is recorded. Responses come, in order of
 * precedence, from a per-path FIFO queue (`enqueue`), a per-path custom default (`setDefault`), or
 * the built-in OpenAI-shaped defaults (chat, completions, embeddings, models, 404 otherwise).
 *
 * Scripts can delay, hang, stream raw SSE frames with gaps, cut the socket mid-stream, or hang
 * mid-stream, which lets gateway tests exercise timeouts, aborts and premature closes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from '../../src/util/prng.js';
import { defaultResponses } from './openai-responses.js';

// ------------------------------------------------------------------------------------------------
// Public types
// ------------------------------------------------------------------------------------------------

export interface StreamScript {
  /** Raw bytes written one write() each, in order. */
  frames: (string | Buffer)[];
  /** Pause between frames (default 0). */
  gapMs?: number;
  /** After writing this many frames, destroy the socket (simulate a cut). */
  cutAfter?: number;
  /** After this many frames, stop writing and never end (until the client aborts). */
  hangAfter?: number;
}

export interface ScriptedResponse {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** JSON body (content-type application/json). */
  json?: unknown;
  /** Raw body as-is (content-type from headers, else application/json). */
  raw?: string | Buffer;
  /** Wait before sending headers. */
  delayMs?: number;
  /** Never answer (until the client aborts). */
  hang?: boolean;
  /** SSE body (content-type text/event-stream). */
  stream?: StreamScript;
}

export interface RecordedRequest {
  method: string;
  /** The URL path without the query string, e.g. '/v1/chat/completions'. */
  path: string;
  /** The raw request target including any query string (extension; e.g. '/v1/x?api-version=1'). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  /** JSON.parse(rawBody) when possible, else undefined. */
  body: any;
  /** True if the client closed the connection before the response finished. */
  aborted: boolean;
  /** Resolves when the exchange ends (finished or aborted). */
  closed: Promise<void>;
}

export type DefaultHandler =
  | ((req: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>)
  | ScriptedResponse;

// ------------------------------------------------------------------------------------------------
// Wire-format helpers
// ------------------------------------------------------------------------------------------------

let idCounter = 0;
function nextId(prefix: string): string {
  idCounter += 1;
  return `${prefix}-fake${idCounter.toString().padStart(6, '0')}`;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A crude, deterministic token estimate (~4 chars per token, at least 1). */
export function approxTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function usageObject(u: { prompt_tokens: number; completion_tokens: number }) {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
  };
}

/** A full `chat.completion` object with one assistant choice. */
export function chatCompletion(
  content: string,
  opts: { model?: string; id?: string; usage?: { prompt_tokens: number; completion_tokens: number } } = {},
): object {
  const usage = opts.usage ?? { prompt_tokens: 10, completion_tokens: approxTokens(content) };
  return {
    id: opts.id ?? nextId('chatcmpl'),
    object: 'chat.completion',
    created: nowSeconds(),
    model: opts.model ?? 'gpt-4o-mini',
    system_fingerprint: 'fp_fake',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: usageObject(usage),
  };
}

/**
 * `chat.completion.chunk` objects: a role chunk (`delta:{role:'assistant', content:''}`), one chunk
 * per piece, a finish chunk (`delta:{}`, `finish_reason:'stop'`) and, with `includeUsage`, a usage
 * chunk (`choices: []`); in that case every other chunk carries `usage: null`, as OpenAI does.
 */
export function chatChunks(
  pieces: string[],
  opts: {
    model?: string;
    id?: string;
    includeUsage?: boolean;
    usage?: { prompt_tokens: number; completion_tokens: number };
  } = {},
): object[] {
  const id = opts.id ?? nextId('chatcmpl');
  const created = nowSeconds();
  const model = opts.model ?? 'gpt-4o-mini';
  const base = (choices: unknown[]) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    system_fingerprint: 'fp_fake',
    choices,
    ...(opts.includeUsage ? { usage: null } : {}),
  });
  const choice = (delta: object, finish_reason: string | null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason,
  });
  const out: object[] = [base([choice({ role: 'assistant', content: '' }, null)])];
  for (const piece of pieces) out.push(base([choice({ content: piece }, null)]));
  out.push(base([choice({}, 'stop')]));
  if (opts.includeUsage) {
    const usage = opts.usage ?? { prompt_tokens: 10, completion_tokens: pieces.length };
    out.push({ ...base([]), usage: usageObject(usage) });
  }
  return out;
}

/** A full legacy `text_completion` object. */
export function textCompletion(
  text: string,
  opts: { model?: string; id?: string; usage?: { prompt_tokens: number; completion_tokens: number } } = {},
): object {
  const usage = opts.usage ?? { prompt_tokens: 10, completion_tokens: approxTokens(text) };
  return {
    id: opts.id ?? nextId('cmpl'),
    object: 'text_completion',
    created: nowSeconds(),
    model: opts.model ?? 'gpt-3.5-turbo-instruct',
    system_fingerprint: 'fp_fake',
    choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' }],
    usage: usageObject(usage),
  };
}

/** Streaming legacy completion chunks: one per piece, a finish chunk, optional usage chunk. */
export function completionChunks(
  pieces: string[],
  opts: { model?: string; id?: string; includeUsage?: boolean } = {},
): object[] {
  const id = opts.id ?? nextId('cmpl');
  const created = nowSeconds();
  const model = opts.model ?? 'gpt-3.5-turbo-instruct';
  const base = (choices: unknown[]) => ({
    id,
    object: 'text_completion',
    created,
    model,
    system_fingerprint: 'fp_fake',
    choices,
    ...(opts.includeUsage ? { usage: null } : {}),
  });
  const out: object[] = pieces.map((text) =>
    base([{ text, index: 0, logprobs: null, finish_reason: null }]),
  );
  out.push(base([{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }]));
  if (opts.includeUsage) {
    out.push({ ...base([]), usage: usageObject({ prompt_tokens: 10, completion_tokens: pieces.length }) });
  }
  return out;
}

/**
 * SSE frames: each event becomes `data: <JSON>\n\n` (a string event is used as the data value
 * as-is; embedded newlines become several `data:` lines). With `crlf`, every line ending is `\r\n`.
 * With `comments`, a `: keep-alive` comment frame precedes each event (including `[DONE]`).
 * `data: [DONE]` is appended unless `done === false`.
 */
export function sseFrames(
  events: (object | string)[],
  opts: { crlf?: boolean; done?: boolean; comments?: boolean } = {},
): string[] {
  const eol = opts.crlf ? '\r\n' : '\n';
  const dataFrame = (data: string) =>
    data
      .split(/\r\n|\n|\r/)
      .map((line) => `data: ${line}${eol}`)
      .join('') + eol;
  const all: string[] = events.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
  if (opts.done !== false) all.push('[DONE]');
  const frames: string[] = [];
  for (const data of all) {
    if (opts.comments) frames.push(`: keep-alive${eol}${eol}`);
    frames.push(dataFrame(data));
  }
  return frames;
}

/** Byte length of the UTF-8 sequence introduced by lead byte `b`, or 0 if `b` is not a lead byte. */
function utf8SeqLen(b: number): number {
  if (b >= 0xf0 && b <= 0xf4) return 4;
  if (b >= 0xe0) return b <= 0xef ? 3 : 0;
  if (b >= 0xc2) return 2;
  return 0;
}

/**
 * Re-chunk the concatenated bytes of `frames`, keeping the original frame boundaries and adding a
 * boundary inside every multi-byte UTF-8 character (after its first byte, and for 4-byte characters
 * also before its last byte). Throws if the frames contain no multi-byte character.
 */
export function splitInsideUtf8(frames: string[]): Buffer[] {
  const bytes = Buffer.from(frames.join(''), 'utf8');
  const cuts = new Set<number>();
  let offset = 0;
  for (const f of frames) {
    offset += Buffer.byteLength(f, 'utf8');
    cuts.add(offset);
  }
  let inside = 0;
  for (let i = 0; i < bytes.length; i++) {
    const len = utf8SeqLen(bytes[i]);
    if (len >= 2 && i + len <= bytes.length) {
      cuts.add(i + 1);
      if (len === 4) cuts.add(i + 3);
      inside += 1;
      i += len - 1;
    }
  }
  if (inside === 0) {
    throw new Error('splitInsideUtf8: the frames contain no multi-byte UTF-8 character to split');
  }
  const sorted = [...cuts].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b);
  const out: Buffer[] = [];
  let start = 0;
  for (const c of sorted) {
    out.push(bytes.subarray(start, c));
    start = c;
  }
  out.push(bytes.subarray(start));
  return out.filter((b) => b.length > 0).map((b) => Buffer.from(b));
}

function defaultErrorType(status: number): string {
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function defaultErrorCode(status: number): string | null {
  if (status === 401) return 'invalid_api_key';
  if (status === 429) return 'rate_limit_exceeded';
  return null;
}

/** An OpenAI-shaped error response: `{"error":{message, type, param:null, code}}`. */
export function openAIError(
  status: number,
  message: string,
  type?: string,
  code?: string | null,
): ScriptedResponse {
  return {
    status,
    json: {
      error: {
        message,
        type: type ?? defaultErrorType(status),
        param: null,
        code: code === undefined ? defaultErrorCode(status) : code,
      },
    },
  };
}

// ------------------------------------------------------------------------------------------------
// Built-in defaults
// ------------------------------------------------------------------------------------------------

export const FAKE_MODELS = [
  { id: 'gpt-4o-mini', object: 'model', created: 1700000000, owned_by: 'openai' },
  { id: 'text-embedding-3-small', object: 'model', created: 1700000000, owned_by: 'openai' },
] as const;

/** Text of a chat message content (string or array of parts). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === 'object' && typeof (p as any).text === 'string' ? (p as any).text : ''))
      .join('');
  }
  return '';
}

/** 32-bit FNV-1a. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Deterministic float32-exact values in [-1, 1) derived from `input`. */
export function fakeEmbedding(input: unknown, dims = 8): number[] {
  const random = seededRandom(fnv1a(JSON.stringify(input)));
  const out: number[] = [];
  for (let i = 0; i < dims; i++) out.push(Math.fround(random() * 2 - 1));
  return out;
}

/** Base64 of the little-endian float32 bytes, as OpenAI's `encoding_format: 'base64'`. */
export function float32Base64(values: number[]): string {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

function embeddingInputs(input: unknown): unknown[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input)) {
    if (input.length > 0 && input.every((x) => typeof x === 'number')) return [input]; // one token array
    return input;
  }
  return [];
}

function badJson(req: RecordedRequest): ScriptedResponse | undefined {
  if (req.body === undefined || req.body === null || typeof req.body !== 'object') {
    return openAIError(
      400,
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)",
      'invalid_request_error',
    );
  }
  return undefined;
}

function defaultChat(req: RecordedRequest): ScriptedResponse {
  const bad = badJson(req);
  if (bad) return bad;
  const body = req.body;
  const model = typeof body.model === 'string' ? body.model : 'gpt-4o-mini';
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  if (body.stream === true) {
    const includeUsage = body.stream_options?.include_usage === true;
    return { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'], { model, includeUsage })) } };
  }
  const lastUser = [...messages].reverse().find((m) => m && m.role === 'user');
  const content = `echo: ${contentText(lastUser?.content)}`;
  const promptText = messages.map((m) => contentText(m?.content)).join(' ');
  return {
    json: chatCompletion(content, {
      model,
      usage: { prompt_tokens: approxTokens(promptText), completion_tokens: approxTokens(content) },
    }),
  };
}

/**
 * A chat handler that reports exactly `usage` (JSON, or a stream's usage chunk when the request asks
 * for it with stream_options.include_usage): for tests that count tokens and cost.
 */
export function chatWithUsage(usage: { prompt_tokens: number; completion_tokens: number }, content = 'ok'): DefaultHandler {
  return (req) => {
    const model = typeof req.body?.model === 'string' ? req.body.model : 'gpt-4o-mini';
    if (req.body?.stream === true) {
      const includeUsage = req.body.stream_options?.include_usage === true;
      return { stream: { frames: sseFrames(chatChunks([content], { model, includeUsage, usage })) } };
    }
    return { json: chatCompletion(content, { model, usage }) };
  };
}

function defaultCompletions(req: RecordedRequest): ScriptedResponse {
  const bad = badJson(req);
  if (bad) return bad;
  const body = req.body;
  const model = typeof body.model === 'string' ? body.model : 'gpt-3.5-turbo-instruct';
  if (body.stream === true) {
    const includeUsage = body.stream_options?.include_usage === true;
    return { stream: { frames: sseFrames(completionChunks(['Hel', 'lo'], { model, includeUsage })) } };
  }
  const prompt = Array.isArray(body.prompt) ? body.prompt.join('') : String(body.prompt ?? '');
  const text = `echo: ${prompt}`;
  return {
    json: textCompletion(text, {
      model,
      usage: { prompt_tokens: approxTokens(prompt), completion_tokens: approxTokens(text) },
    }),
  };
}

function defaultEmbeddings(req: RecordedRequest): ScriptedResponse {
  const bad = badJson(req);
  if (bad) return bad;
  const body = req.body;
  const inputs = embeddingInputs(body.input);
  if (inputs.length === 0) {
    return openAIError(400, "'input' is a required property", 'invalid_request_error');
  }
  const dims = typeof body.dimensions === 'number' && body.dimensions > 0 ? body.dimensions : 8;
  const base64 = body.encoding_format === 'base64';
  const data = inputs.map((input, index) => {
    const floats = fakeEmbedding(input, dims);
    return { object: 'embedding', index, embedding: base64 ? float32Base64(floats) : floats };
  });
  const promptTokens = inputs
    .map((i) => (typeof i === 'string' ? approxTokens(i) : Array.isArray(i) ? i.length : 1))
    .reduce((a, b) => a + b, 0);
  return {
    json: {
      object: 'list',
      data,
      model: typeof body.model === 'string' ? body.model : 'text-embedding-3-small',
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    },
  };
}

function notFound(req: RecordedRequest): ScriptedResponse {
  return openAIError(
    404,
    `Invalid URL (${req.method} ${req.path})`,
    'invalid_request_error',
    null,
  );
}

function builtInDefault(req: RecordedRequest): ScriptedResponse {
  const { method, path } = req;
  if (method === 'POST' && path === '/v1/chat/completions') return defaultChat(req);
  if (method === 'POST' && path === '/v1/completions') return defaultCompletions(req);
  if (method === 'POST' && path === '/v1/embeddings') return defaultEmbeddings(req);
  if (method === 'POST' && path === '/v1/responses') return defaultResponses(req);
  if (method === 'GET' && path === '/v1/models') {
    return { json: { object: 'list', data: FAKE_MODELS.map((m) => ({ ...m })) } };
  }
  if (method === 'GET' && path.startsWith('/v1/models/')) {
    const id = decodeURIComponent(path.slice('/v1/models/'.length));
    const model = FAKE_MODELS.find((m) => m.id === id);
    if (model) return { json: { ...model } };
    return openAIError(404, `The model '${id}' does not exist`, 'invalid_request_error', 'model_not_found');
  }
  return notFound(req);
}

// ------------------------------------------------------------------------------------------------
// The server
// ------------------------------------------------------------------------------------------------

interface Waiter {
  n: number;
  resolve: (reqs: RecordedRequest[]) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** Resolves after `ms`, or early (false) when `signal` fires. */
function pause(ms: number, signals: AbortSignal[]): Promise<boolean> {
  return new Promise((resolve) => {
    if (signals.some((s) => s.aborted)) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener('abort', onAbort);
      resolve(false);
    };
    const timer = setTimeout(() => {
      for (const s of signals) s.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves when `signal` fires. */
function untilAborted(signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((s) => s.aborted)) return resolve();
    const onAbort = () => {
      for (const s of signals) s.removeEventListener('abort', onAbort);
      resolve();
    };
    for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
  });
}

export class FakeOpenAI {
  readonly origin: string;
  readonly baseUrl: string;
  readonly requests: RecordedRequest[] = [];

  private readonly server: http.Server;
  private readonly queues = new Map<string, DefaultHandler[]>();
  private readonly defaults = new Map<string, DefaultHandler>();
  private waiters: Waiter[] = [];
  private readonly lifetime = new AbortController();
  private requestCounter = 0;

  private constructor(server: http.Server, origin: string) {
    this.server = server;
    this.origin = origin;
    this.baseUrl = `${origin}/v1`;
  }

  /** Start a server listening on 127.0.0.1 with an ephemeral port. */
  static async start(): Promise<FakeOpenAI> {
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const fake = new FakeOpenAI(server, `http://127.0.0.1:${port}`);
    server.on('request', (req, res) => fake.onRequest(req, res));
    return fake;
  }

  /** Queue responses (or handlers, which may wait) for `path` (FIFO); they are used before the path's default. */
  enqueue(path: string, ...responses: DefaultHandler[]): void {
    const q = this.queues.get(path) ?? [];
    q.push(...responses);
    this.queues.set(path, q);
  }

  /** Replace the built-in default for `path` with a handler or a fixed response. */
  setDefault(path: string, handler: DefaultHandler): void {
    this.defaults.set(path, handler);
  }

  /** Resolves (with a copy of all recorded requests) once at least `n` requests have arrived. */
  waitForRequests(n: number, timeoutMs = 5000): Promise<RecordedRequest[]> {
    if (this.requests.length >= n) return Promise.resolve(this.requests.slice());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        n,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(
            new Error(
              `FakeOpenAI.waitForRequests(${n}) timed out after ${timeoutMs}ms with ${this.requests.length} request(s): ` +
                this.requests.map((r) => `${r.method} ${r.url}`).join(', '),
            ),
          );
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Clear queues, custom defaults and recorded requests. */
  reset(): void {
    this.queues.clear();
    this.defaults.clear();
    this.requests.length = 0;
  }

  /** Close every socket and the server. Pending waiters are rejected. */
  async close(): Promise<void> {
    this.lifetime.abort();
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new Error('FakeOpenAI closed'));
    }
    this.waiters = [];
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  // ----------------------------------------------------------------------------------------------

  private record(rec: RecordedRequest): void {
    this.requests.push(rec);
    const ready = this.waiters.filter((w) => this.requests.length >= w.n);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => this.requests.length < w.n);
    for (const w of ready) {
      clearTimeout(w.timer);
      w.resolve(this.requests.slice());
    }
  }

  private nextResponse(rec: RecordedRequest): DefaultHandler {
    for (const key of [rec.url, rec.path]) {
      const q = this.queues.get(key);
      if (q && q.length > 0) return q.shift()!;
    }
    for (const key of [rec.url, rec.path]) {
      const d = this.defaults.get(key);
      if (d) return d;
    }
    return builtInDefault;
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);

    // Lifecycle: `closed` resolves on the response's 'close'; `aborted` if that came before 'finish'
    // and we did not cut the socket ourselves.
    const clientGone = new AbortController();
    let serverCut = false;
    let resolveClosed!: () => void;
    const closed = new Promise<void>((r) => (resolveClosed = r));
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      url,
      headers: { ...req.headers },
      rawBody: '',
      body: undefined,
      aborted: false,
      closed,
    };
    res.on('close', () => {
      if (!res.writableFinished && !serverCut) rec.aborted = true;
      clientGone.abort();
      resolveClosed();
    });

    const chunks: Buffer[] = [];
    let recorded = false;
    const recordOnce = () => {
      if (recorded) return;
      recorded = true;
      rec.rawBody = Buffer.concat(chunks).toString('utf8');
      if (rec.rawBody.length > 0) {
        try {
          rec.body = JSON.parse(rec.rawBody);
        } catch {
          rec.body = undefined;
        }
      }
      this.record(rec);
    };
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => recordOnce());
    // A client that goes away mid-body is still recorded (with aborted = true).
    res.on('close', () => recordOnce());
    req.on('end', () => {
      recordOnce();
      const signals = [clientGone.signal, this.lifetime.signal];
      this.respond(rec, res, signals, () => {
        serverCut = true;
      }).catch((err: unknown) => {
        if (!res.headersSent) {
          const e = openAIError(500, `FakeOpenAI handler error: ${String(err)}`, 'server_error');
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify(e.json));
        } else {
          serverCut = true;
          res.destroy();
        }
      });
    });
  }

  private async respond(
    rec: RecordedRequest,
    res: http.ServerResponse,
    signals: AbortSignal[],
    markCut: () => void,
  ): Promise<void> {
    const handler = this.nextResponse(rec);
    const script = typeof handler === 'function' ? await handler(rec) : handler;

    if (script.delayMs && script.delayMs > 0) {
      if (!(await pause(script.delayMs, signals))) return;
    }
    if (script.hang) {
      await untilAborted(signals);
      return;
    }
    if (res.destroyed) return;

    this.requestCounter += 1;
    const baseHeaders: Record<string, string> = {
      'x-request-id': `req_fake_${this.requestCounter}`,
      'openai-version': '2020-10-01',
      'openai-processing-ms': '1',
    };
    const custom = script.headers ?? {};
    const status = script.status ?? 200;
    const applyHeaders = (defaults: Record<string, string>) => {
      const all: Record<string, string> = { ...baseHeaders, ...defaults };
      for (const [k, v] of Object.entries(custom)) all[k.toLowerCase()] = v;
      for (const [k, v] of Object.entries(all)) res.setHeader(k, v);
      res.statusCode = status;
    };

    if (script.stream) {
      const s = script.stream;
      applyHeaders({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      const cutAt = s.cutAfter ?? Infinity;
      const hangAt = s.hangAfter ?? Infinity;
      const stopAt = Math.min(cutAt, hangAt, s.frames.length);
      const gap = s.gapMs ?? 0;
      for (let i = 0; i < stopAt; i++) {
        if (i > 0 && gap > 0) {
          if (!(await pause(gap, signals))) return;
        }
        if (!(await writeFrame(res, s.frames[i]))) return;
      }
      if (s.cutAfter !== undefined && cutAt <= hangAt) {
        await flushSocket(res);
        markCut();
        res.socket?.destroy();
        res.destroy();
        return;
      }
      if (s.hangAfter !== undefined) {
        await untilAborted(signals);
        return;
      }
      res.end();
      return;
    }

    let body: string | Buffer | undefined;
    if (script.raw !== undefined) body = script.raw;
    else if (script.json !== undefined) body = JSON.stringify(script.json);
    applyHeaders(body === undefined ? {} : { 'content-type': 'application/json' });
    if (body !== undefined && !res.hasHeader('content-length')) {
      res.setHeader('content-length', Buffer.byteLength(body));
    }
    res.end(body);
  }
}

/** Write one frame; resolves true once flushed, false if the response closed first. */
function writeFrame(res: http.ServerResponse, frame: string | Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    if (res.destroyed || res.writableEnded) return resolve(false);
    const onClose = () => resolve(false);
    res.once('close', onClose);
    res.write(frame, (err) => {
      res.off('close', onClose);
      resolve(!err);
    });
  });
}

/** Resolves once everything written so far has been handed to the kernel (or the socket is gone). */
function flushSocket(res: http.ServerResponse): Promise<void> {
  const socket = res.socket;
  if (!socket || socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      socket.off('close', done);
      resolve();
    };
    socket.once('close', done);
    socket.write('', () => done());
  });
}
