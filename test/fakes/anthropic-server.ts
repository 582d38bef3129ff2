/**
 * A scriptable fake of Anthropic's Messages API, written from the API's
 * documentation, not from the gateway's translator (it imports nothing from src/providers/).
 *
 * A real `node:http` server on 127.0.0.1 (ephemeral port). Like the real service it checks
 * `x-api-key` (401 `authentication_error` otherwise), requires `anthropic-version`, rejects top-level
 * fields the API does not have ("Extra inputs are not permitted"), requires `max_tokens`, allows only
 * `user`/`assistant` roles, temperature 0–1, and the tool-use rule: every `tool_use` of an assistant
 * turn has its `tool_result` in the very next (user) message. Errors use Anthropic's shape
 * `{type:"error", error:{type, message}}`. Answers come from a FIFO queue per path (`enqueue`), else a
 * default: a message echoing the last user text (as SSE events when `stream: true`), a token count
 * (`fakeTokenCount`), or the model list.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeResponse {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  /** SSE body: each string is one socket write (so an event, or a character, can be split). */
  frames?: (string | Buffer)[];
  /** Destroy the socket after this many frames. */
  cutAfter?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** The body's text as received. */
  raw: string;
}

export const FAKE_ANTHROPIC_MODELS = [
  { type: 'model', id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
  { type: 'model', id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5', created_at: '2025-10-15T00:00:00Z' },
];

/** The API versions it knows: the gateway's default and what the @anthropic-ai/sdk in node_modules sends. */
const API_VERSIONS = new Set(['2023-06-01', '2026-10-21']);

/** Top-level fields of a Messages request (the API answers 400 for any other). */
const MESSAGE_FIELDS = new Set([
  'model', 'messages', 'max_tokens', 'system', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'stream',
  'tools', 'tool_choice', 'metadata', 'thinking', 'service_tier', 'container', 'mcp_servers', 'output_config',
]);

/** Top-level fields of a token count request. */
const COUNT_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers']);

/** The fake's token count: a fixed function of the messages' JSON, so tests can compute it. */
export const fakeTokenCount = (body: { messages: unknown; system?: unknown }): number =>
  Math.ceil(JSON.stringify([body.system ?? '', body.messages]).length / 4);

export function anthropicError(status: number, type: string, message: string, headers?: Record<string, string>): FakeResponse {
  return { status, headers, json: { type: 'error', error: { type, message }, request_id: 'req_fake' } };
}

/** One SSE event as Anthropic writes it: `event:` line, then `data:` with the same `type`. */
export function sseEvent(type: string, payload: Record<string, unknown> = {}): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

export interface ScriptBlock {
  text?: string[];
  tool?: { id: string; name: string; json: string[] };
}

/** A whole streamed message: message_start, a ping, each block (start, deltas, stop), message_delta, message_stop. */
export function messageStream(
  blocks: ScriptBlock[],
  opts: { stopReason?: string; input?: number; output?: number; cacheRead?: number; cacheWrite?: number; model?: string } = {},
): string[] {
  const out = [
    sseEvent('message_start', {
      message: {
        id: 'msg_fake_stream',
        type: 'message',
        role: 'assistant',
        model: opts.model ?? 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: opts.input ?? 10,
          output_tokens: 1,
          cache_read_input_tokens: opts.cacheRead ?? 0,
          cache_creation_input_tokens: opts.cacheWrite ?? 0,
        },
      },
    }),
    sseEvent('ping'),
  ];
  blocks.forEach((b, index) => {
    if (b.tool) {
      out.push(sseEvent('content_block_start', { index, content_block: { type: 'tool_use', id: b.tool.id, name: b.tool.name, input: {} } }));
      for (const j of b.tool.json) out.push(sseEvent('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: j } }));
    } else {
      out.push(sseEvent('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      for (const t of b.text ?? []) out.push(sseEvent('content_block_delta', { index, delta: { type: 'text_delta', text: t } }));
    }
    out.push(sseEvent('content_block_stop', { index }));
  });
  out.push(
    sseEvent('message_delta', { delta: { stop_reason: opts.stopReason ?? 'end_turn', stop_sequence: null }, usage: { output_tokens: opts.output ?? 5 } }),
    sseEvent('message_stop'),
  );
  return out;
}

function lastUserText(messages: any[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    const t = (m.content as any[]).filter((b) => b.type === 'text').map((b) => b.text);
    if (t.length > 0) return t.join(' ');
  }
  return '';
}

/** What the real API would refuse in a Messages body, as its 400 message; undefined when valid. */
function invalid(body: any): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'body must be a JSON object';
  for (const k of Object.keys(body)) if (!MESSAGE_FIELDS.has(k)) return `${k}: Extra inputs are not permitted`;
  if (typeof body.model !== 'string') return 'model: Field required';
  if (!Number.isInteger(body.max_tokens)) return 'max_tokens: Field required';
  if (body.max_tokens < 1) return 'max_tokens: Input should be greater than or equal to 1';
  if (!Array.isArray(body.messages)) return 'messages: Field required';
  if (body.temperature !== undefined && (body.temperature < 0 || body.temperature > 1)) {
    return 'temperature: Input should be less than or equal to 1';
  }
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) return 'system: Input should be a valid list';
  if (body.stop_sequences !== undefined && !Array.isArray(body.stop_sequences)) return 'stop_sequences: Input should be a valid list';
  if (body.tool_choice !== undefined && !['auto', 'any', 'tool', 'none'].includes(body.tool_choice?.type)) return 'tool_choice.type: invalid';
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (typeof t.name !== 'string' || t.input_schema?.type !== 'object') return `tools.${i}.input_schema: Field required`;
  }
  let pending: string[] = [];
  for (const [i, m] of body.messages.entries()) {
    if (m.role !== 'user' && m.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const blocks: any[] = typeof m.content === 'string' ? [] : m.content;
    if (!Array.isArray(blocks)) return `messages.${i}.content: Input should be a valid list`;
    const results = blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id);
    for (const id of results) {
      if (!pending.includes(id)) return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
    const missing = pending.filter((id) => !results.includes(id));
    if (missing.length > 0) {
      return `messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    for (const b of blocks) {
      if (b.type === 'text' && (typeof b.text !== 'string' || b.text === '')) return `messages.${i}: text content blocks must be non-empty`;
      if (b.type === 'tool_use' && (typeof b.input !== 'object' || b.input === null || Array.isArray(b.input))) {
        return `messages.${i}.content.tool_use.input: Input should be a valid dictionary`;
      }
    }
    pending = m.role === 'assistant' ? blocks.filter((b) => b.type === 'tool_use').map((b) => b.id) : [];
  }
  return undefined;
}

export class FakeAnthropic {
  readonly requests: RecordedRequest[] = [];
  private readonly queues = new Map<string, FakeResponse[]>();
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly apiKey: string,
  ) {}

  static async start(apiKey = 'sk-ant-fake-key'): Promise<FakeAnthropic> {
    const server = http.createServer();
    const fake = new FakeAnthropic(server, apiKey);
    server.on('request', (req, res) => fake.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** The base URL, composed as Anthropic's own (`https://api.anthropic.com/v1`). */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  enqueue(path: string, response: FakeResponse): void {
    const q = this.queues.get(path) ?? [];
    q.push(response);
    this.queues.set(path, q);
  }

  reset(): void {
    this.requests.length = 0;
    this.queues.clear();
  }

  /** Resolves once `n` requests were received (the tests' own timeout bounds the wait). */
  async waitForRequests(n: number): Promise<RecordedRequest[]> {
    while (this.requests.length < n) await new Promise<void>((r) => this.waiters.push(r));
    return this.requests.slice(0, n);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      let body: any;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const url = req.url ?? '/';
      const path = url.split('?')[0]!;
      this.requests.push({ method: req.method ?? '', path, url, headers: req.headers, body, raw });
      for (const w of this.waiters.splice(0)) w();
      this.send(res, this.answer(req, path, raw, body));
    });
  }

  private answer(req: http.IncomingMessage, path: string, raw: string, body: any): FakeResponse {
    if (req.headers['x-api-key'] !== this.apiKey) return anthropicError(401, 'authentication_error', 'invalid x-api-key');
    if (!API_VERSIONS.has(String(req.headers['anthropic-version']))) {
      return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
    }
    if (path === '/v1/messages' && req.method === 'POST') {
      if (raw !== '' && body === undefined) return anthropicError(400, 'invalid_request_error', 'The request body is not valid JSON.');
      const why = invalid(body);
      if (why) return anthropicError(400, 'invalid_request_error', why);
    }
    if (path === '/v1/messages/count_tokens' && req.method === 'POST') {
      const extra = Object.keys(body ?? {}).find((k) => !COUNT_FIELDS.has(k));
      if (extra) return anthropicError(400, 'invalid_request_error', `${extra}: Extra inputs are not permitted`);
      if (typeof body.model !== 'string' || !Array.isArray(body.messages)) return anthropicError(400, 'invalid_request_error', 'model, messages: Field required');
    }
    const queued = this.queues.get(path)?.shift();
    if (queued) return queued;
    if (path === '/v1/models' && req.method === 'GET') {
      return { json: { data: FAKE_ANTHROPIC_MODELS, has_more: false, first_id: FAKE_ANTHROPIC_MODELS[0]!.id, last_id: FAKE_ANTHROPIC_MODELS.at(-1)!.id } };
    }
    if (path === '/v1/messages/count_tokens') return { json: { input_tokens: fakeTokenCount(body) } };
    if (path === '/v1/messages' && req.method === 'POST') {
      const text = `echo: ${lastUserText(body.messages)}`;
      if (body.stream === true) return { frames: messageStream([{ text: [text.slice(0, 4), text.slice(4)] }]) };
      return {
        json: {
          id: 'msg_fake',
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [{ type: 'text', text }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      };
    }
    return anthropicError(404, 'not_found_error', `Not found: ${req.method} ${path}`);
  }

  private send(res: http.ServerResponse, r: FakeResponse): void {
    res.setHeader('request-id', 'req_fake');
    for (const [k, v] of Object.entries(r.headers ?? {})) res.setHeader(k, v);
    res.statusCode = r.status ?? 200;
    if (!r.frames) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(r.json ?? {}));
      return;
    }
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-cache');
    res.flushHeaders();
    let i = 0;
    const next = (): void => {
      if (r.cutAfter !== undefined && i >= r.cutAfter) {
        res.socket?.destroy();
        return;
      }
      if (i >= r.frames!.length) {
        res.end();
        return;
      }
      // Each frame is its own write, after the previous one left: the gateway sees them as separate reads.
      res.write(r.frames![i++], () => setImmediate(next));
    };
    next();
  }
}
