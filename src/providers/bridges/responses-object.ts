/**
 * The Responses API's response object, as the gateway makes it when it translates from chat
 * completions: the request's fields echoed with their defaults, the output items, the status and the
 * usage. The JSON answer and the `response` of a stream's closing event are this one object.
 */
import { randomUUID } from 'node:crypto';
import type { Usage } from '../types.js';

type Json = Record<string, unknown>;

/** A new id: `prefix_` and 32 hex digits of a random UUID (`resp_…`, `msg_…`, `fc_…`); UUIDs come from a pooled source, cheaper than random bytes each time. */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** A chat finish reason → the response's status and, when incomplete, why. */
export function statusOf(finish: unknown): { status: ResponseStatus; incomplete_details: { reason: string } | null } {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** The Responses usage of a chat usage object (its cached and reasoning details kept). */
export function responsesUsage(u: unknown): Json | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as Json;
  const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
  const input = num(o.prompt_tokens);
  const output = num(o.completion_tokens);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: num((o.prompt_tokens_details as Json | null | undefined)?.cached_tokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: num((o.completion_tokens_details as Json | null | undefined)?.reasoning_tokens) },
    total_tokens: typeof o.total_tokens === 'number' ? o.total_tokens : input + output,
  };
}

/** The gateway's usage (chat shape) of a Responses usage object: what accounting, limits and metrics read. */
export function gatewayUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as Json;
  const p = typeof o.input_tokens === 'number' ? o.input_tokens : 0;
  const c = typeof o.output_tokens === 'number' ? o.output_tokens : 0;
  const usage: Usage = { prompt_tokens: p, completion_tokens: c, total_tokens: typeof o.total_tokens === 'number' ? o.total_tokens : p + c };
  const cached = (o.input_tokens_details as Json | null | undefined)?.cached_tokens;
  if (typeof cached === 'number' && cached > 0) usage.prompt_tokens_details = { cached_tokens: cached };
  return usage;
}

/** What a response object is made of besides the request: its id, time, model, status and output. */
export interface ResponseParts {
  id: string;
  created_at: number;
  /** Seconds, once the response is over; null while in progress. */
  completed_at?: number | null;
  model: unknown;
  status: ResponseStatus;
  incomplete_details?: { reason: string } | null;
  output: unknown[];
  usage?: Json;
}

/** A function tool as the response echoes it: `description`, `parameters` and `strict` always present (null when not sent). */
function echoedTool(tool: unknown): unknown {
  const t = tool as Json | null;
  if (t?.type !== 'function') return tool;
  return { ...t, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null };
}

/** The text settings as the response echoes them: a `format` always present (`text` when not sent). */
function echoedText(text: unknown): Json {
  const t = text && typeof text === 'object' ? (text as Json) : {};
  return { ...t, format: t.format ?? { type: 'text' } };
}

/**
 * The request's fields a response object echoes, each with the default the specifications give it
 * when the request left it out: what a response object has besides its id, time, status and output.
 */
export function echoedFields(body: Json): Json {
  const or = <T>(v: unknown, d: T): unknown => (v === undefined || v === null ? d : v);
  const reasoning = body.reasoning as Json | null | undefined;
  return {
    background: or(body.background, false),
    instructions: or(body.instructions, null),
    max_output_tokens: or(body.max_output_tokens, null),
    max_tool_calls: or(body.max_tool_calls, null),
    parallel_tool_calls: or(body.parallel_tool_calls, true),
    previous_response_id: or(body.previous_response_id, null),
    reasoning: { effort: reasoning?.effort ?? null, summary: reasoning?.summary ?? null },
    store: or(body.store, true),
    temperature: or(body.temperature, 1),
    presence_penalty: or(body.presence_penalty, 0),
    frequency_penalty: or(body.frequency_penalty, 0),
    top_logprobs: or(body.top_logprobs, 0),
    text: echoedText(body.text),
    tool_choice: or(body.tool_choice, 'auto'),
    tools: Array.isArray(body.tools) ? body.tools.map(echoedTool) : [],
    top_p: or(body.top_p, 1),
    truncation: or(body.truncation, 'disabled'),
    user: or(body.user, null),
    service_tier: or(body.service_tier, 'default'),
    safety_identifier: or(body.safety_identifier, null),
    prompt_cache_key: or(body.prompt_cache_key, null),
    metadata: or(body.metadata, {}),
  };
}

/**
 * The response object: the parts, and the request's fields echoed with their defaults; every field
 * OpenAI's object and the Open Responses specification require is present.
 */
export function responseObject(body: Json, p: ResponseParts): Json {
  return {
    id: p.id,
    object: 'response',
    created_at: p.created_at,
    completed_at: p.completed_at ?? null,
    status: p.status,
    error: null,
    incomplete_details: p.incomplete_details ?? null,
    model: p.model ?? body.model,
    output: p.output,
    usage: p.usage ?? null,
    ...echoedFields(body),
  };
}

/** An assistant message item with its text (and refusal) as content parts. */
export function messageItem(id: string, text: string, status: string, refusal?: string): Json {
  const content: Json[] = [];
  if (text !== '' || refusal === undefined) content.push({ type: 'output_text', text, annotations: [], logprobs: [] });
  if (refusal !== undefined) content.push({ type: 'refusal', refusal });
  return { id, type: 'message', status, role: 'assistant', content };
}

/** A function call item. */
export function functionCallItem(id: string, callId: unknown, name: unknown, args: string, status: string): Json {
  return { id, type: 'function_call', status, call_id: callId, name, arguments: args };
}

/**
 * A chat message's (or stream delta's) reasoning text: `reasoning_content`, as DeepSeek and the
 * hosts compatible with it send it, or `reasoning` when it is text (vLLM, OpenRouter).
 */
export function reasoningText(m: Json): string | undefined {
  const text = typeof m.reasoning_content === 'string' ? m.reasoning_content : m.reasoning;
  return typeof text === 'string' && text !== '' ? text : undefined;
}

/** A reasoning item with the model's reasoning text (not a summary: chat hosts send the text itself). */
export function reasoningItem(id: string, text: string, status: string): Json {
  return { id, type: 'reasoning', status, summary: [], content: [{ type: 'reasoning_text', text }] };
}

/** The output items of a chat completion's first choice: its reasoning, its message's text, then its tool calls. */
export function outputItems(message: Json | undefined, status: string): unknown[] {
  if (!message) return [];
  const out: unknown[] = [];
  const reasoning = reasoningText(message);
  if (reasoning !== undefined) out.push(reasoningItem(newId('rs'), reasoning, status));
  const text = typeof message.content === 'string' ? message.content : '';
  const refusal = typeof message.refusal === 'string' ? message.refusal : undefined;
  const calls = (message.tool_calls as Json[] | undefined) ?? [];
  if (text !== '' || refusal !== undefined || calls.length === 0) out.push(messageItem(newId('msg'), text, status, refusal));
  for (const c of calls) {
    const fn = (c.function ?? {}) as Json;
    out.push(functionCallItem(newId('fc'), c.id, fn.name, typeof fn.arguments === 'string' ? fn.arguments : '', 'completed'));
  }
  return out;
}
