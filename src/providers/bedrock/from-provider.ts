import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../errors/gateway-error.js';
import type { JsonResult, ProviderRequest, StreamChunk, StreamEvent, StreamStep, Usage } from '../types.js';

type Json = Record<string, unknown>;
type Headers = Record<string, string | string[] | undefined>;

/** Converse `stopReason` → OpenAI `finish_reason`; unknown values → `stop`. */
const FINISH: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  content_filtered: 'content_filter',
  guardrail_intervened: 'content_filter',
  malformed_model_output: 'stop',
  malformed_tool_use: 'stop',
};
const finishOf = (stopReason: unknown): string => (typeof stopReason === 'string' ? FINISH[stopReason] : undefined) ?? 'stop';

/**
 * Bedrock error type (lower-case; HTTP `x-amzn-errortype` or a stream exception's type) → the status
 * the client gets, when it differs from, or is more telling than, the HTTP status.
 */
const STATUS_BY_TYPE: Readonly<Record<string, number>> = {
  throttlingexception: 429,
  validationexception: 400,
  accessdeniedexception: 403,
  invalidsignatureexception: 403,
  unrecognizedclientexception: 403,
  expiredtokenexception: 403,
  resourcenotfoundexception: 404,
  modelnotreadyexception: 503,
  serviceunavailableexception: 503,
  internalserverexception: 500,
  modeltimeoutexception: 504,
  modelerrorexception: 502,
  modelstreamerrorexception: 502,
};

/** An error status → the OpenAI error type. */
function openAIType(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 403) return 'permission_error';
  if (status === 408 || status === 504) return 'timeout';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** The Converse usage → OpenAI usage (§7.2): prompt = total − output when both are there. */
function readUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as Json;
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  const output = num(o.outputTokens) ?? 0;
  const read = num(o.cacheReadInputTokens);
  const write = num(o.cacheWriteInputTokens);
  const total = num(o.totalTokens);
  const prompt = total !== undefined && num(o.outputTokens) !== undefined ? total - output : (num(o.inputTokens) ?? 0) + (read ?? 0) + (write ?? 0);
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: output, total_tokens: total ?? prompt + output };
  if (read !== undefined || write !== undefined) {
    usage.prompt_tokens_details = {};
    if (read !== undefined) usage.prompt_tokens_details.cached_tokens = read;
    if (write !== undefined) usage.prompt_tokens_details.cache_write_tokens = write;
  }
  return usage;
}

/** The id and time of an answer: labels for the client, not logic (the one impure line here). */
const stamp = (): { id: string; created: number } => ({ id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000) });

function parseObject(text: string, what: string): Json {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new GatewayError('upstream_invalid_response', `The provider sent ${what} that is not JSON.`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new GatewayError('upstream_invalid_response', `The provider sent ${what} that is not a JSON object.`);
  return v as Json;
}

/** `{modelSummaries: [...]}` (ListFoundationModels) → the OpenAI model list. */
function modelList(body: Json): JsonResult {
  const summaries = Array.isArray(body.modelSummaries) ? (body.modelSummaries as Json[]) : [];
  const data = summaries
    .filter((m) => typeof m?.modelId === 'string')
    .map((m) => ({ id: m.modelId as string, object: 'model', created: 0, owned_by: typeof m.providerName === 'string' ? m.providerName : 'bedrock' }));
  return { body: { object: 'list', data } };
}

/** A Converse answer (or the model list) → the OpenAI body. */
export function fromBedrockJson(req: ProviderRequest, text: string): JsonResult {
  const body = parseObject(text, 'a body');
  if (req.endpoint === 'models') return modelList(body);
  const content = (((body.output as Json | undefined)?.message as Json | undefined)?.content ?? []) as Json[];
  let textOut: string | null = null;
  const toolCalls: Json[] = [];
  for (const block of content) {
    if (typeof block?.text === 'string') textOut = (textOut ?? '') + block.text;
    else if (block?.toolUse) {
      const use = block.toolUse as Json;
      toolCalls.push({ id: use.toolUseId, type: 'function', function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) } });
    }
    // reasoningContent, images and other blocks have no place in a chat completion message.
  }
  const message: Json = { role: 'assistant', content: textOut, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const usage = readUsage(body.usage);
  const { id, created } = stamp();
  const out: Json = {
    id,
    object: 'chat.completion',
    created,
    model: req.body?.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishOf(body.stopReason) }],
  };
  if (usage) out.usage = usage;
  return usage ? { body: out, usage } : { body: out };
}

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function errorFrom(type: string | undefined, message: string, httpStatus: number, retryHeaders?: Record<string, string>): GatewayError {
  const status = (type && STATUS_BY_TYPE[type.toLowerCase()]) || (httpStatus >= 400 && httpStatus <= 599 ? httpStatus : 502);
  return new GatewayError('upstream_error', message, {
    status,
    upstreamType: openAIType(status),
    upstreamCode: type ?? null,
    headers: retryHeaders,
  });
}

/** A non-2xx restJson1 answer → the error envelope: the type from `x-amzn-errortype` or the body, the provider's message. */
export function fromBedrockError(status: number, text: string, headers: Headers): GatewayError {
  let type = header(headers, 'x-amzn-errortype')?.split(':')[0];
  let message = `The provider answered ${status}.`;
  try {
    const body = JSON.parse(text) as Json;
    const m = body.message ?? body.Message;
    if (typeof m === 'string') message = m;
    const t = body.__type ?? body.code;
    if (!type && typeof t === 'string') type = t.split('#').pop();
  } catch {
    if (text.length > 0) message = text.slice(0, 500);
  }
  let retry: Record<string, string> | undefined;
  for (const h of ['retry-after', 'retry-after-ms']) {
    const v = header(headers, h);
    if (v !== undefined) (retry ??= {})[h] = v;
  }
  return errorFrom(type || undefined, message, status, retry);
}

export interface BedrockStreamState {
  /** `{"id":…,"object":"chat.completion.chunk","created":…,"model":…,` — the head every chunk shares. */
  head: string;
  /** The client asked for the usage chunk (else it is kept for accounting and not shown). */
  showUsage: boolean;
  /** contentBlockIndex → OpenAI tool_calls index. */
  tools: Map<number, number> | undefined;
  /** messageStop came: the answer is whole (metadata may follow). */
  stopped: boolean;
}

export function bedrockStreamStart(req: ProviderRequest): BedrockStreamState {
  const { id, created } = stamp();
  const opts = req.body?.stream_options as { include_usage?: boolean } | null | undefined;
  return {
    head: `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(req.body?.model ?? '')},`,
    showUsage: opts?.include_usage === true,
    tools: undefined,
    stopped: false,
  };
}

const choice = (s: BedrockStreamState, delta: string, finish = 'null'): StreamChunk => ({
  data: `${s.head}"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}]}`,
});
const step = (state: BedrockStreamState, chunks: StreamChunk[], done?: boolean): StreamStep<BedrockStreamState> =>
  done ? { state, chunks, done } : { state, chunks };

/** One ConverseStream event → OpenAI chunks. A pure reducer but for the tool-index table it fills. */
/** An exception frame (src/upstream/aws-event-stream.ts): `{type, message, ...}` → its error. */
export function streamFailure(ev: StreamEvent): GatewayError {
  let type: string | undefined;
  let message = 'The provider reported an error mid-stream.';
  try {
    const p = JSON.parse(ev.data) as Json;
    if (typeof p.type === 'string') type = p.type;
    if (typeof p.message === 'string') message = p.message;
  } catch {
    // keep the defaults
  }
  return errorFrom(type, message, 502);
}

export function fromBedrockStreamEvent(state: BedrockStreamState, ev: StreamEvent): StreamStep<BedrockStreamState> {
  switch (ev.event) {
    case 'contentBlockDelta': {
      const p = parseObject(ev.data, 'a stream event');
      const d = p.delta as Json | undefined;
      if (typeof d?.text === 'string') return step(state, [choice(state, `{"content":${JSON.stringify(d.text)}}`)]);
      const input = (d?.toolUse as Json | undefined)?.input;
      if (typeof input === 'string') {
        const idx = state.tools?.get(p.contentBlockIndex as number);
        if (idx === undefined) throw new GatewayError('upstream_invalid_response', 'The provider sent tool input for a block it never started.');
        return step(state, [choice(state, `{"tool_calls":[{"index":${idx},"function":{"arguments":${JSON.stringify(input)}}}]}`)]);
      }
      return step(state, []); // reasoningContent and other deltas are not part of a chat completion
    }
    case 'messageStart':
      return step(state, [choice(state, '{"role":"assistant","content":""}')]);
    case 'contentBlockStart': {
      const p = parseObject(ev.data, 'a stream event');
      const use = (p.start as Json | undefined)?.toolUse as Json | undefined;
      if (!use) return step(state, []);
      const tools = (state.tools ??= new Map());
      const idx = tools.size;
      tools.set(p.contentBlockIndex as number, idx);
      const call = { index: idx, id: use.toolUseId, type: 'function', function: { name: use.name, arguments: '' } };
      return step(state, [choice(state, `{"tool_calls":[${JSON.stringify(call)}]}`)]);
    }
    case 'messageStop': {
      const p = parseObject(ev.data, 'a stream event');
      return step({ ...state, stopped: true }, [choice(state, '{}', `"${finishOf(p.stopReason)}"`)]);
    }
    case 'metadata': {
      const usage = readUsage(parseObject(ev.data, 'a stream event').usage);
      if (!usage) return step(state, [], true);
      const data = state.showUsage ? `${state.head}"choices":[],"usage":${JSON.stringify(usage)}}` : '';
      return step(state, [{ data, usage }], true);
    }
    case 'error':
      throw streamFailure(ev);
    default:
      return step(state, []); // contentBlockStop, initial-response and events added later
  }
}

/** The body ended: whole once messageStop came (metadata may be missing), else cut short. */
export function bedrockStreamEnd(state: BedrockStreamState): StreamChunk[] {
  if (!state.stopped) throw new GatewayError('stream_interrupted');
  return [];
}
