/**
 * A chat completion → Anthropic's message object: the gateway's own `msg_…` id, the text and the
 * tool calls as `text` and `tool_use` blocks, the finish reason as a stop reason, and the usage
 * counted as Anthropic counts it (input tokens exclude the cache reads). Pure.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import { newId } from './responses-object.js';

type Json = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** The stop sequence a choice says it stopped at (OpenAI-compatible hosts such as vLLM name it in `stop_reason`), when the request asked for it. */
export function matchedStop(choice: Json | undefined, stops: unknown): string | null {
  const said = choice?.stop_reason;
  return typeof said === 'string' && Array.isArray(stops) && stops.includes(said) ? said : null;
}

/**
 * A chat finish reason → Anthropic's stop reason: tool calls `tool_use`, `length` `max_tokens`, a
 * content filter or a refusal `refusal`, a named stop sequence `stop_sequence`, else `end_turn`.
 */
export function stopReason(finish: unknown, o: { calls: boolean; refused: boolean; stop: string | null }): string {
  if (o.refused || finish === 'content_filter') return 'refusal';
  if (o.calls || finish === 'tool_calls' || finish === 'function_call') return 'tool_use';
  if (finish === 'length') return 'max_tokens';
  if (o.stop !== null) return 'stop_sequence';
  return 'end_turn';
}

/**
 * Anthropic's usage of a chat usage object: `input_tokens` is the prompt less its cache reads and
 * writes, which are `cache_read_input_tokens` (chat's `cached_tokens`) and
 * `cache_creation_input_tokens` (`cache_write_tokens`, where the provider reports them).
 */
export function messagesUsage(u: unknown): Json {
  const o = (u && typeof u === 'object' ? u : {}) as Json;
  const details = (o.prompt_tokens_details ?? {}) as Json;
  const read = num(details.cached_tokens);
  const write = num(details.cache_write_tokens);
  return {
    input_tokens: Math.max(0, num(o.prompt_tokens) - read - write),
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    output_tokens: num(o.completion_tokens),
  };
}

/** A tool call's JSON arguments → the `input` object of a tool_use block; anything but an object is the provider's fault. */
export function toolInput(args: unknown): Json {
  if (args === undefined || args === null || args === '') return {};
  try {
    const v: unknown = typeof args === 'string' ? JSON.parse(args) : args;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Json;
  } catch {
    // answered below
  }
  throw new GatewayError('upstream_invalid_response', 'The provider answered a tool call whose arguments are not a JSON object.');
}

/** A chat message → content blocks: its text (or refusal) as a text block, then a tool_use block per tool call. */
export function contentBlocks(message: Json | undefined): Json[] {
  if (!message) return [];
  const out: Json[] = [];
  const text = typeof message.content === 'string' ? message.content : '';
  const refusal = typeof message.refusal === 'string' ? message.refusal : '';
  if (text !== '' || refusal !== '') out.push({ type: 'text', text: text !== '' ? text : refusal });
  for (const c of (message.tool_calls as Json[] | undefined) ?? []) {
    const fn = (c.function ?? {}) as Json;
    out.push({ type: 'tool_use', id: c.id, name: fn.name, input: toolInput(fn.arguments) });
  }
  return out;
}

/** The message object of a chat completion (its first choice), for the request `body`. */
export function messageObject(body: Json, chat: Json, usage: unknown): Json {
  const choice = (chat.choices as Json[] | undefined)?.[0];
  if (!choice) throw new GatewayError('upstream_invalid_response', 'The provider answered without a choice.');
  const message = choice.message as Json | undefined;
  const stop = matchedStop(choice, body.stop_sequences);
  const calls = Array.isArray(message?.tool_calls) && message.tool_calls.length > 0;
  const refused = typeof message?.refusal === 'string' && message.refusal !== '';
  const reason = stopReason(choice.finish_reason, { calls, refused, stop });
  return {
    id: newId('msg'),
    type: 'message',
    role: 'assistant',
    model: chat.model ?? body.model,
    content: contentBlocks(message),
    stop_reason: reason,
    stop_sequence: reason === 'stop_sequence' ? stop : null,
    usage: messagesUsage(usage),
  };
}
