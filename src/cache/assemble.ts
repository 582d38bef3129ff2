import type { Endpoint } from '../providers/types.js';
import { responsesChunksToJson, responsesJsonToChunks } from './assemble-responses.js';
import { messagesChunksToJson, messagesEventName, messagesJsonToChunks } from './assemble-messages.js';
import type { GatewayEvent } from '../upstream/events.js';

type Json = Record<string, any>;

/**
 * A cached stream answered as JSON, and a cached JSON answer replayed as a stream, for the OpenAI
 * shapes (chat and legacy completions; the Responses API's in assemble-responses.ts, Anthropic's
 * Messages API's in assemble-messages.ts). Pure functions over parsed objects.
 */
export function chunksToJson(endpoint: Endpoint, chunks: readonly Json[]): Json {
  if (endpoint === 'responses') return responsesChunksToJson(chunks);
  if (endpoint === 'messages') return messagesChunksToJson(chunks);
  const first = chunks.find((c) => c && typeof c === 'object') ?? {};
  const choices = new Map<number, Json>();
  let usage: Json | undefined;
  for (const c of chunks) {
    if (c.usage) usage = c.usage;
    for (const ch of (c.choices ?? []) as Json[]) {
      const i = ch.index ?? 0;
      let acc = choices.get(i);
      if (!acc) {
        acc =
          endpoint === 'chat'
            ? { index: i, message: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }
            : { index: i, text: '', logprobs: null, finish_reason: null };
        choices.set(i, acc);
      }
      if (ch.finish_reason) acc.finish_reason = ch.finish_reason;
      if (endpoint !== 'chat') {
        if (typeof ch.text === 'string') acc.text += ch.text;
        continue;
      }
      const d = (ch.delta ?? {}) as Json;
      const m = acc.message as Json;
      if (typeof d.role === 'string') m.role = d.role;
      if (typeof d.content === 'string') m.content += d.content;
      if (typeof d.refusal === 'string') m.refusal = (m.refusal ?? '') + d.refusal;
      for (const tc of (d.tool_calls ?? []) as Json[]) {
        m.tool_calls ??= [];
        const slot = (m.tool_calls[tc.index ?? 0] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        if (tc.id) slot.id = tc.id;
        if (tc.type) slot.type = tc.type;
        if (tc.function?.name) slot.function.name += tc.function.name;
        if (tc.function?.arguments) slot.function.arguments += tc.function.arguments;
      }
    }
  }
  for (const acc of choices.values()) {
    if (endpoint === 'chat' && acc.message.tool_calls && acc.message.content === '') acc.message.content = null;
  }
  const out: Json = {
    id: first.id,
    object: endpoint === 'chat' ? 'chat.completion' : 'text_completion',
    created: first.created,
    model: first.model,
    choices: [...choices.values()].sort((a, b) => a.index - b.index),
  };
  if (first.system_fingerprint) out.system_fingerprint = first.system_fingerprint;
  if (usage) out.usage = usage;
  return out;
}

/** A complete answer as the chunks a stream of it would have carried (content whole, one chunk each). */
export function jsonToChunks(endpoint: Endpoint, body: Json): Json[] {
  if (endpoint === 'responses') return responsesJsonToChunks(body);
  if (endpoint === 'messages') return messagesJsonToChunks(body);
  const base = { id: body.id, object: endpoint === 'chat' ? 'chat.completion.chunk' : 'text_completion', created: body.created, model: body.model };
  const choices = (body.choices ?? []) as Json[];
  const out: Json[] = [];
  if (endpoint === 'chat') {
    out.push({ ...base, choices: choices.map((c) => ({ index: c.index, delta: { role: 'assistant', content: '' }, finish_reason: null })) });
    const content = choices.map((c) => {
      const delta: Json = {};
      if (typeof c.message?.content === 'string') delta.content = c.message.content;
      if (c.message?.tool_calls) {
        delta.tool_calls = (c.message.tool_calls as Json[]).map((t, i) => ({ index: i, id: t.id, type: t.type, function: t.function }));
      }
      return { index: c.index, delta, finish_reason: null };
    });
    out.push({ ...base, choices: content });
    out.push({ ...base, choices: choices.map((c) => ({ index: c.index, delta: {}, finish_reason: c.finish_reason ?? 'stop' })) });
  } else {
    out.push({ ...base, choices: choices.map((c) => ({ index: c.index, text: c.text ?? '', logprobs: null, finish_reason: c.finish_reason ?? 'stop' })) });
  }
  if (body.usage) out.push({ ...base, choices: [], usage: body.usage });
  return out;
}

/** A stream chunk's event for the client: on the Messages door named as its data's type (Anthropic's SSE event name). */
export function chunkEvent(endpoint: Endpoint, data: string): Extract<GatewayEvent, { type: 'chunk' }> {
  const event = endpoint === 'messages' ? messagesEventName(data) : undefined;
  return event === undefined ? { type: 'chunk', data } : { type: 'chunk', data, event };
}
