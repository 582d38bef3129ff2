import { GatewayError } from '../../errors/gateway-error.js';
import type { JsonResult, ProviderRequest, StreamChunk, StreamEvent, StreamStep, Usage } from '../types.js';

type Json = Record<string, unknown>;

/** Gemini finishReason → OpenAI finish_reason; anything else is `stop`. */
const FINISH: Readonly<Record<string, string>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  IMAGE_PROHIBITED_CONTENT: 'content_filter',
  IMAGE_RECITATION: 'content_filter',
  MODEL_ARMOR: 'content_filter',
};

/** A functionCall turns `stop` into `tool_calls` (Gemini says STOP after calling a function). */
export function finishReason(reason: unknown, calledFunction: boolean): string {
  const mapped = (typeof reason === 'string' && FINISH[reason]) || 'stop';
  return calledFunction && mapped === 'stop' ? 'tool_calls' : mapped;
}

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/**
 * usageMetadata → OpenAI usage (§7.2): prompt = promptTokenCount + toolUsePromptTokenCount; completion
 * = candidatesTokenCount + thoughtsTokenCount (thinking is output the account pays for; also given as
 * completion_tokens_details.reasoning_tokens); cached_tokens = cachedContentTokenCount (inside prompt).
 */
export function usageOf(meta: unknown): (Usage & { completion_tokens_details?: { reasoning_tokens: number } }) | undefined {
  if (!meta || typeof meta !== 'object') return undefined;
  const m = meta as Json;
  const prompt = num(m.promptTokenCount) + num(m.toolUsePromptTokenCount);
  const thoughts = num(m.thoughtsTokenCount);
  const completion = num(m.candidatesTokenCount) + thoughts;
  const usage: Usage & { completion_tokens_details?: { reasoning_tokens: number } } = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: typeof m.totalTokenCount === 'number' ? m.totalTokenCount : prompt + completion,
  };
  if (typeof m.cachedContentTokenCount === 'number') usage.prompt_tokens_details = { cached_tokens: m.cachedContentTokenCount };
  if (thoughts > 0) usage.completion_tokens_details = { reasoning_tokens: thoughts };
  return usage;
}

/** A tool call id for a functionCall that has none: stable, from the response id and the position. */
function callId(call: Json, responseId: string, candidate: number, n: number): string {
  return typeof call.id === 'string' && call.id !== '' ? call.id : `call_${responseId}_${candidate}_${n}`;
}

interface Turn {
  text: string;
  calls: Json[];
}

/** A candidate's parts → its text (thought parts left out) and its OpenAI tool calls. */
function readParts(parts: unknown, responseId: string, candidate: number, firstCall: number): Turn {
  let text = '';
  const calls: Json[] = [];
  if (Array.isArray(parts)) {
    for (const p of parts as Json[]) {
      if (typeof p?.text === 'string' && p.thought !== true) text += p.text;
      const fc = p?.functionCall as Json | undefined;
      if (fc && typeof fc.name === 'string') {
        calls.push({
          index: firstCall + calls.length,
          id: callId(fc, responseId, candidate, firstCall + calls.length),
          type: 'function',
          function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) },
        });
      }
    }
  }
  return { text, calls };
}

/** logprobsResult → OpenAI choice logprobs. */
function logprobsOf(r: unknown): Json | null {
  const chosen = (r as Json | undefined)?.chosenCandidates;
  if (!Array.isArray(chosen)) return null;
  const top = (r as Json).topCandidates as Json[] | undefined;
  return {
    content: (chosen as Json[]).map((c, i) => ({
      token: c.token,
      logprob: c.logProbability,
      bytes: null,
      top_logprobs: ((top?.[i]?.candidates as Json[] | undefined) ?? []).map((t) => ({ token: t.token, logprob: t.logProbability, bytes: null })),
    })),
    refusal: null,
  };
}

function parseObject(text: string, what: string): Json {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new GatewayError('upstream_invalid_response', `The provider returned ${what} that is not JSON.`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new GatewayError('upstream_invalid_response', `The provider returned ${what} that is not a JSON object.`);
  return v as Json;
}

const createdOf = (t: unknown): number => {
  const ms = typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : 0;
};

/** The publisher model list → OpenAI's model list. */
function modelList(body: Json): Json {
  const models = Array.isArray(body.publisherModels) ? (body.publisherModels as Json[]) : [];
  return {
    object: 'list',
    data: models
      .filter((m) => typeof m?.name === 'string')
      .map((m) => ({ id: (m.name as string).replace(/^publishers\/google\/models\//, ''), object: 'model', created: 0, owned_by: 'google' })),
  };
}

/** A 2xx GenerateContentResponse → an OpenAI chat completion. */
export function fromVertexJson(req: ProviderRequest, text: string): JsonResult {
  const body = parseObject(text, 'a body');
  if (req.endpoint === 'models') return { body: modelList(body) };
  const responseId = typeof body.responseId === 'string' ? body.responseId : 'vertex';
  const candidates = Array.isArray(body.candidates) ? (body.candidates as Json[]) : [];
  const choices = candidates.map((c, i) => {
    const index = typeof c.index === 'number' ? c.index : i;
    const { text: content, calls } = readParts((c.content as Json | undefined)?.parts, responseId, index, 0);
    const message: Json = { role: 'assistant', content: content === '' && calls.length > 0 ? null : content, refusal: null };
    if (calls.length > 0) message.tool_calls = calls.map(({ index: _i, ...call }) => call);
    return { index, message, logprobs: logprobsOf(c.logprobsResult), finish_reason: finishReason(c.finishReason, calls.length > 0) };
  });
  if (choices.length === 0) {
    // The prompt was blocked (promptFeedback.blockReason): no candidates.
    const blocked = (body.promptFeedback as Json | undefined)?.blockReason !== undefined;
    choices.push({ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: blocked ? 'content_filter' : 'stop' });
  }
  const usage = usageOf(body.usageMetadata);
  const out: Json = {
    id: `chatcmpl-${responseId}`,
    object: 'chat.completion',
    created: createdOf(body.createTime),
    model: typeof body.modelVersion === 'string' ? body.modelVersion : req.body?.model,
    choices,
  };
  if (usage) out.usage = usage;
  return usage ? { body: out, usage } : { body: out };
}

/** Google's error statuses → the OpenAI error type. */
function typeFor(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 403) return 'permission_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  if (status === 408 || status === 504) return 'timeout';
  return 'server_error';
}

/** google.rpc.RetryInfo's retryDelay ("13s", "1.5s") → whole seconds for Retry-After. */
function retryDelaySeconds(details: unknown): string | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const d of details as Json[]) {
    const delay = d?.retryDelay;
    if (typeof delay === 'string' && /^\d+(\.\d+)?s$/.test(delay)) return String(Math.ceil(parseFloat(delay)));
  }
  return undefined;
}

/** Google's `{error:{code,message,status,details}}` → the error envelope, the upstream status kept. */
export function fromVertexError(status: number, text: string, headers: Record<string, string | string[] | undefined>): GatewayError {
  let message = `The provider answered ${status}.`;
  let code: string | null = null;
  let details: unknown;
  try {
    const parsed = JSON.parse(text) as unknown;
    const err = (Array.isArray(parsed) ? (parsed[0] as Json | undefined)?.error : (parsed as Json | null)?.error) as Json | undefined;
    if (err && typeof err === 'object') {
      if (typeof err.message === 'string') message = err.message;
      if (typeof err.status === 'string') code = err.status;
      details = err.details;
    }
  } catch {
    if (text.length > 0) message = text.slice(0, 500);
  }
  const out: Record<string, string> = {};
  for (const h of ['retry-after', 'retry-after-ms']) {
    const v = headers[h];
    if (v !== undefined) out[h] = Array.isArray(v) ? v[0]! : v;
  }
  const delay = retryDelaySeconds(details);
  if (out['retry-after'] === undefined && delay !== undefined) out['retry-after'] = delay;
  const kept = status >= 400 && status <= 599 ? status : 502;
  return new GatewayError('upstream_error', message, { status: kept, upstreamCode: code, upstreamType: typeFor(kept), headers: out });
}

// ---------------------------------------------------------------------------------------------
// Streams

interface CandidateState {
  /** Tool calls emitted so far (the next call's index). */
  calls: number;
  finish?: string;
}

export interface VertexStreamState {
  /** The chunk's JSON up to the choices: `{"id":…,"object":…,"created":…,"model":…,"choices":[`. */
  head: string;
  candidates: CandidateState[];
  usage?: Usage;
  includeUsage: boolean;
  model: string;
  responseId: string;
}

export function vertexStreamStart(req: ProviderRequest): VertexStreamState {
  const opts = req.body?.stream_options as { include_usage?: boolean } | null | undefined;
  const model = typeof req.body?.model === 'string' ? req.body.model : '';
  return { head: '', candidates: [], includeUsage: opts?.include_usage === true, model, responseId: '' };
}

function chunk(state: VertexStreamState, choice: string): StreamChunk {
  return { data: `${state.head}${choice}]}` };
}

/** One SSE `data:` (a whole GenerateContentResponse with only the new text) → OpenAI chunks. Pure. */
export function fromVertexStreamEvent(prev: VertexStreamState, ev: StreamEvent): StreamStep<VertexStreamState> {
  const body = parseObject(ev.data, 'a stream event');
  if (body.error) {
    // Its own code is the status when nothing was sent yet (a started stream ends with an error event).
    const code = (body.error as Json).code;
    const status = typeof code === 'number' && code >= 400 && code <= 599 ? code : 502;
    throw fromVertexError(status, JSON.stringify({ error: body.error }), {});
  }
  const state: VertexStreamState = { ...prev, candidates: prev.candidates.slice() };
  if (state.head === '') {
    state.responseId = typeof body.responseId === 'string' ? body.responseId : 'vertex';
    const model = typeof body.modelVersion === 'string' ? body.modelVersion : state.model;
    state.head = `{"id":${JSON.stringify(`chatcmpl-${state.responseId}`)},"object":"chat.completion.chunk","created":${createdOf(body.createTime)},"model":${JSON.stringify(model)},"choices":[`;
  }
  const chunks: StreamChunk[] = [];
  const usage = usageOf(body.usageMetadata);
  if (usage) state.usage = usage;
  let candidates = Array.isArray(body.candidates) ? (body.candidates as Json[]) : [];
  if (candidates.length === 0 && (body.promptFeedback as Json | undefined)?.blockReason !== undefined) {
    candidates = [{ index: 0, finishReason: 'SAFETY' }];
  }
  candidates.forEach((c, i) => {
    const index = typeof c.index === 'number' ? c.index : i;
    const before = state.candidates[index];
    const cs: CandidateState = before ? { ...before } : { calls: 0 };
    const { text, calls } = readParts((c.content as Json | undefined)?.parts, state.responseId, index, cs.calls);
    cs.calls += calls.length;
    const delta: Json = {};
    if (!before) {
      delta.role = 'assistant';
      delta.content = text;
    } else if (text !== '') delta.content = text;
    if (calls.length > 0) delta.tool_calls = calls;
    if (!before || text !== '' || calls.length > 0) {
      const lp = logprobsOf(c.logprobsResult);
      chunks.push(chunk(state, `{"index":${index},"delta":${JSON.stringify(delta)},"logprobs":${lp ? JSON.stringify(lp) : 'null'},"finish_reason":null}`));
    }
    if (c.finishReason !== undefined && cs.finish === undefined) {
      cs.finish = finishReason(c.finishReason, cs.calls > 0);
      chunks.push(chunk(state, `{"index":${index},"delta":{},"logprobs":null,"finish_reason":"${cs.finish}"}`));
    }
    state.candidates[index] = cs;
  });
  return { state, chunks };
}

/**
 * Gemini sends no terminator: the body's end is the stream's end. Without a finishReason it was cut.
 * Then the usage (the last usageMetadata seen is the complete one): a `choices: []` chunk when the
 * client asked for it, else kept for accounting only.
 */
export function vertexStreamEnd(state: VertexStreamState): StreamChunk[] {
  const finished = state.candidates.length > 0 && state.candidates.every((c) => c === undefined || c.finish !== undefined);
  if (!finished) throw new GatewayError('stream_interrupted', 'The provider stream ended before a finishReason.');
  if (!state.usage) return [];
  if (!state.includeUsage) return [{ data: '', usage: state.usage }];
  return [{ data: `${state.head}],"usage":${JSON.stringify(state.usage)}}`, usage: state.usage }];
}
