/**
 * OpenAI's own Responses API for the OpenAI-shaped fake (test/fakes/openai-server.ts): POST
 * /v1/responses answers an echo of the last user text as a response object (`resp_fake…` ids), or
 * its stream of named events.
 */
import type { RecordedRequest, ScriptedResponse } from './openai-server.js';

let counter = 0;

function lastUserText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  const user = [...input].reverse().find((i) => i && i.role === 'user');
  if (!user) return '';
  if (typeof user.content === 'string') return user.content;
  return (user.content as { text?: string }[]).map((p) => p.text ?? '').join('');
}

/** A function tool as OpenAI echoes it: every field present, `strict` true unless sent. */
function echoedTool(t: Record<string, any>): Record<string, unknown> {
  return t.type === 'function' ? { description: null, parameters: null, ...t, strict: t.strict ?? true } : t;
}

/** A completed response object with one message, as OpenAI answers (every field its object has). */
export function fakeResponseObject(body: Record<string, any>, text: string, usage = { input_tokens: 12, output_tokens: 4 }): Record<string, unknown> {
  counter += 1;
  const now = Math.floor(Date.now() / 1000);
  return {
    id: `resp_fake${counter}`,
    object: 'response',
    created_at: now,
    status: 'completed',
    background: false,
    completed_at: now,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: null,
    model: `${body.model}-2025-01-01`,
    output: [{ id: `msg_fake${counter}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] }],
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: null,
    reasoning: { effort: null, summary: null },
    safety_identifier: null,
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: ((body.tools ?? []) as Record<string, any>[]).map(echoedTool),
    top_logprobs: 0,
    top_p: 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    truncation: 'disabled',
    user: null,
    metadata: body.metadata ?? {},
    usage: {
      input_tokens: usage.input_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input_tokens + usage.output_tokens,
    },
  };
}

/** `event: <type>` frames of Responses events, numbered in order. */
export function responsesEventFrames(events: Record<string, unknown>[]): string[] {
  return events.map((e, i) => `event: ${String(e.type)}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`);
}

/** The events of a streamed response whose text comes in `pieces`. */
export function responseEvents(response: Record<string, any>, pieces: string[]): Record<string, unknown>[] {
  const item = response.output[0];
  const at = { item_id: item.id, output_index: 0, content_index: 0 };
  const text = pieces.join('');
  const pending = { ...response, status: 'in_progress', output: [], usage: null };
  return [
    { type: 'response.created', response: pending },
    { type: 'response.in_progress', response: pending },
    { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', ...at, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
    ...pieces.map((delta) => ({ type: 'response.output_text.delta', ...at, delta, logprobs: [] })),
    { type: 'response.output_text.done', ...at, text, logprobs: [] },
    { type: 'response.content_part.done', ...at, part: { type: 'output_text', text, annotations: [], logprobs: [] } },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response },
  ];
}

export function defaultResponses(req: RecordedRequest): ScriptedResponse {
  const body = (req.body ?? {}) as Record<string, any>;
  const text = `echo: ${lastUserText(body.input)}`;
  const response = fakeResponseObject(body, text);
  if (body.stream === true) return { stream: { frames: responsesEventFrames(responseEvents(response, [text.slice(0, 4), text.slice(4)])) } };
  return { json: response };
}
