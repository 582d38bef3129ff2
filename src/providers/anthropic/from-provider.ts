/**
 * Anthropic answers → OpenAI chat completions. Pure, but for `created`,
 * which Anthropic does not send: the clock is handed in (`nowSeconds`).
 */
import { GatewayError } from '../../errors/gateway-error.js';
import type { JsonResult, ProviderRequest, StreamChunk, StreamEvent, StreamStep, Usage } from '../types.js';

type Json = Record<string, unknown>;
type Headers = Record<string, string | string[] | undefined>;

/** Anthropic's stop reasons → OpenAI's finish reasons. Anything else (null, a new reason) → `stop`. */
const FINISH: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};
const finishReason = (r: unknown): string => (typeof r === 'string' ? FINISH[r] : undefined) ?? 'stop';

export interface TokenCounts {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** Anthropic usage fields present in `u` update `t` (message_delta repeats the cumulative counts). */
export function readCounts(t: TokenCounts, u: unknown): void {
  if (!u || typeof u !== 'object') return;
  const o = u as Json;
  t.input = num(o.input_tokens) ?? t.input;
  t.output = num(o.output_tokens) ?? t.output;
  t.cacheRead = num(o.cache_read_input_tokens) ?? t.cacheRead;
  t.cacheWrite = num(o.cache_creation_input_tokens) ?? t.cacheWrite;
}

/** Usage: prompt = input + cache writes + cache reads; reads → cached_tokens, writes → cache_write_tokens. */
export function toUsage(t: TokenCounts): Usage {
  const read = t.cacheRead ?? 0;
  const write = t.cacheWrite ?? 0;
  const prompt = t.input + read + write;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: t.output, total_tokens: prompt + t.output };
  if (t.cacheRead !== undefined || t.cacheWrite !== undefined) {
    usage.prompt_tokens_details = write > 0 ? { cached_tokens: read, cache_write_tokens: write } : { cached_tokens: read };
  }
  return usage;
}

/** An answer's JSON object, or the 502 saying what it was not. */
export function parse(text: string, what: string): Json {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new GatewayError('upstream_invalid_response', `The provider sent ${what} that is not JSON.`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) {
    throw new GatewayError('upstream_invalid_response', `The provider sent ${what} that is not a JSON object.`);
  }
  return v as Json;
}

/** Anthropic's model list → OpenAI's. */
function fromModels(body: Json): JsonResult {
  const data = Array.isArray(body.data) ? body.data : [];
  return {
    body: {
      object: 'list',
      data: data.map((m: Json) => {
        const t = typeof m.created_at === 'string' ? Date.parse(m.created_at) : NaN;
        return { id: m.id, object: 'model', created: Number.isNaN(t) ? 0 : Math.floor(t / 1000), owned_by: 'anthropic' };
      }),
    },
  };
}

/** A 2xx Messages answer → an OpenAI chat completion; the model list → OpenAI's list. */
export function fromAnthropicJson(req: ProviderRequest, text: string, nowSeconds: () => number): JsonResult {
  const msg = parse(text, 'a body');
  if (req.endpoint === 'models') return fromModels(msg);
  let content = '';
  let toolCalls: Json[] | undefined;
  const blocks = Array.isArray(msg.content) ? (msg.content as Json[]) : [];
  for (const b of blocks) {
    if (b.type === 'text' && typeof b.text === 'string') content += b.text;
    else if (b.type === 'tool_use') {
      (toolCalls ??= []).push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
    }
    // thinking, redacted_thinking and server-tool blocks have no place in a chat completion: dropped.
  }
  const counts: TokenCounts = { input: 0, output: 0 };
  readCounts(counts, msg.usage);
  const usage = toUsage(counts);
  const message: Json = { role: 'assistant', content: content === '' && toolCalls ? null : content, refusal: null };
  if (toolCalls) message.tool_calls = toolCalls;
  return {
    body: {
      id: msg.id,
      object: 'chat.completion',
      created: nowSeconds(),
      model: msg.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(msg.stop_reason) }],
      usage,
    },
    usage,
  };
}

/** Anthropic error type → the status the gateway answers with when the status is not known (a mid-stream error). */
const STATUS_BY_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 503,
};

/**
 * Upstream status → the client's. Kept, except 529 (Anthropic's "overloaded") for a client of another
 * format (`native` false), answered 503: OpenAI clients know 503, nobody outside Anthropic knows 529.
 * A Messages client gets the 529 it knows; the gateway's retries, fallbacks and breaker count both.
 */
const clientStatus = (status: number, native: boolean): number =>
  status === 529 && !native ? 503 : status >= 400 && status <= 599 ? status : 502;

const RETRY_HEADERS = ['retry-after', 'retry-after-ms', 'x-should-retry'];

function errorParts(text: string): { message?: string; type?: string } {
  try {
    const parsed = JSON.parse(text) as Json;
    const err = (parsed.error ?? parsed) as Json | string;
    if (typeof err === 'string') return { message: err };
    if (err && typeof err === 'object') {
      return {
        message: typeof err.message === 'string' ? err.message : undefined,
        type: typeof err.type === 'string' ? err.type : undefined,
      };
    }
  } catch {
    if (text.length > 0) return { message: text.slice(0, 500) };
  }
  return {};
}

/**
 * `{type:"error", error:{type, message}}` → the error envelope, the provider's message and type kept,
 * `code` its type; a Messages request (`req`, served natively) keeps a 529.
 */
export function fromAnthropicError(status: number, text: string, headers: Headers, req?: ProviderRequest): GatewayError {
  const { message, type } = errorParts(text);
  const out: Record<string, string> = {};
  for (const h of RETRY_HEADERS) {
    const v = headers[h];
    const s = Array.isArray(v) ? v[0] : v;
    if (s !== undefined) out[h] = s;
  }
  return new GatewayError('upstream_error', message ?? `The provider answered ${status}.`, {
    status: clientStatus(status, req?.endpoint === 'messages'),
    upstreamCode: type ?? null,
    upstreamType: type,
    headers: out,
  });
}

export interface AnthropicStreamState {
  includeUsage: boolean;
  nowSeconds: () => number;
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…,"choices":[` once message_start is seen. */
  prefix: string;
  /** Tool calls seen so far − 1: OpenAI's tool call index (Anthropic's block index also counts text blocks). */
  toolIdx: number;
  /** Anthropic block index → OpenAI tool call index, for tool_use blocks. */
  toolOfBlock: Map<number, number> | undefined;
  counts: TokenCounts;
  done: boolean;
}

export function anthropicStreamStart(req: ProviderRequest, nowSeconds: () => number): AnthropicStreamState {
  const opts = req.body?.stream_options as { include_usage?: boolean } | null | undefined;
  return {
    includeUsage: opts?.include_usage === true,
    nowSeconds,
    prefix: '',
    toolIdx: -1,
    toolOfBlock: undefined,
    counts: { input: 0, output: 0 },
    done: false,
  };
}

function choice(s: AnthropicStreamState, delta: string, finish = 'null'): StreamChunk {
  if (s.prefix === '') throw new GatewayError('upstream_invalid_response', 'The provider sent stream content before message_start.');
  return { data: `${s.prefix}{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}]}` };
}

/** A stream's `error` event → its error; `native`: for a Messages client, whose overloaded_error is a 529. */
export function streamError(data: string, native = false): GatewayError {
  const { message, type } = errorParts(data);
  return new GatewayError('upstream_error', message ?? 'The provider reported an error mid-stream.', {
    status: native && type === 'overloaded_error' ? 529 : ((type !== undefined ? STATUS_BY_TYPE[type] : undefined) ?? 502),
    upstreamCode: type ?? null,
    upstreamType: type,
  });
}

const NONE: StreamChunk[] = [];

/**
 * One Anthropic stream event → OpenAI chunks. A reducer over a state that belongs to one stream (it
 * is updated in place: one object per stream, none per event).
 */
export function fromAnthropicStreamEvent(s: AnthropicStreamState, ev: StreamEvent): StreamStep<AnthropicStreamState> {
  if (ev.event === 'error') throw streamError(ev.data);
  if (ev.event === 'ping') return { state: s, chunks: NONE };
  const e = parse(ev.data, 'a stream event');
  switch (e.type) {
    case 'message_start': {
      const m = (e.message ?? {}) as Json;
      readCounts(s.counts, m.usage);
      s.prefix = `{"id":${JSON.stringify(m.id ?? '')},"object":"chat.completion.chunk","created":${s.nowSeconds()},"model":${JSON.stringify(m.model ?? '')},"choices":[`;
      return { state: s, chunks: [choice(s, '{"role":"assistant","content":""}')] };
    }
    case 'content_block_start': {
      const b = (e.content_block ?? {}) as Json;
      if (b.type === 'tool_use') {
        const idx = ++s.toolIdx;
        (s.toolOfBlock ??= new Map()).set(e.index as number, idx);
        const call = { index: idx, id: b.id, type: 'function', function: { name: b.name, arguments: '' } };
        return { state: s, chunks: [choice(s, `{"tool_calls":[${JSON.stringify(call)}]}`)] };
      }
      if (b.type === 'text' && typeof b.text === 'string' && b.text !== '') {
        return { state: s, chunks: [choice(s, `{"content":${JSON.stringify(b.text)}}`)] };
      }
      return { state: s, chunks: NONE };
    }
    case 'content_block_delta': {
      const d = (e.delta ?? {}) as Json;
      if (d.type === 'text_delta') {
        if (typeof d.text !== 'string' || d.text === '') return { state: s, chunks: NONE };
        return { state: s, chunks: [choice(s, `{"content":${JSON.stringify(d.text)}}`)] };
      }
      if (d.type === 'input_json_delta') {
        const idx = s.toolOfBlock?.get(e.index as number);
        if (idx === undefined || typeof d.partial_json !== 'string' || d.partial_json === '') return { state: s, chunks: NONE };
        return { state: s, chunks: [choice(s, `{"tool_calls":[{"index":${idx},"function":{"arguments":${JSON.stringify(d.partial_json)}}}]}`)] };
      }
      // thinking_delta, signature_delta, citations_delta: no place in a chat chunk.
      return { state: s, chunks: NONE };
    }
    case 'message_delta': {
      readCounts(s.counts, e.usage);
      const d = (e.delta ?? {}) as Json;
      return { state: s, chunks: [choice(s, '{}', `"${finishReason(d.stop_reason)}"`)] };
    }
    case 'message_stop': {
      if (s.prefix === '') throw new GatewayError('upstream_invalid_response', 'The provider sent message_stop before message_start.');
      s.done = true;
      const usage = toUsage(s.counts);
      // The usage chunk when the client asked for it; otherwise the numbers only (for accounting).
      const data = s.includeUsage ? `${s.prefix}],"usage":${JSON.stringify(usage)}}` : '';
      return { state: s, chunks: [{ data, usage }], done: true };
    }
    case 'error':
      throw streamError(ev.data);
    default:
      // ping, content_block_stop, and event types Anthropic may add: nothing for the client.
      return { state: s, chunks: NONE };
  }
}

export function anthropicStreamEnd(s: AnthropicStreamState): StreamChunk[] {
  if (!s.done) throw new GatewayError('stream_interrupted');
  return [];
}
