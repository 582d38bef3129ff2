/**
 * Anthropic's Messages API's half of src/cache/assemble.ts: a stream of its events as the message
 * object, and a message as the events a stream of it would have carried (each block's content in one
 * delta). Each event's data names its type, which is also its SSE event name (`messagesEventName`).
 * Pure functions over parsed objects.
 */
type Json = Record<string, any>;

/** A block being assembled: the block, and a tool input's JSON text so far. */
interface Building {
  block: Json;
  json?: string;
}

/** One `content_block_delta` applied to its block. */
function applyDelta(b: Building, d: Json): void {
  switch (d.type) {
    case 'text_delta':
      b.block.text = (b.block.text ?? '') + (d.text ?? '');
      return;
    case 'input_json_delta':
      b.json = (b.json ?? '') + (d.partial_json ?? '');
      return;
    case 'thinking_delta':
      b.block.thinking = (b.block.thinking ?? '') + (d.thinking ?? '');
      return;
    case 'signature_delta':
      b.block.signature = d.signature;
      return;
    case 'citations_delta':
      (b.block.citations ??= []).push(d.citation);
      return;
  }
}

/** A block whose input came as JSON deltas, with that input parsed (an empty text is `{}`). */
function finished(b: Building): Json {
  if (b.json === undefined) return b.block;
  try {
    return { ...b.block, input: b.json === '' ? {} : JSON.parse(b.json) };
  } catch {
    return b.block; // an input cut short stays as its block opened
  }
}

/** The message a stream of Messages events carried: message_start's message, its blocks, message_delta's stop and usage. */
export function messagesChunksToJson(chunks: readonly Json[]): Json {
  let message: Json = {};
  const blocks = new Map<number, Building>();
  for (const e of chunks) {
    if (!e || typeof e !== 'object') continue;
    if (e.type === 'message_start') message = { ...e.message, usage: { ...e.message?.usage } };
    else if (e.type === 'content_block_start') blocks.set(e.index, { block: { ...e.content_block } });
    else if (e.type === 'content_block_delta') {
      const b = blocks.get(e.index);
      if (b) applyDelta(b, e.delta ?? {});
    } else if (e.type === 'message_delta') {
      Object.assign(message, e.delta);
      for (const [k, v] of Object.entries((e.usage ?? {}) as Json)) if (v !== null && v !== undefined) (message.usage ??= {})[k] = v;
    }
  }
  message.content = [...blocks.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => finished(b));
  return message;
}

/** One block's events: `content_block_start` with the block emptied, its content as one delta each, `content_block_stop`. */
function blockEvents(block: Json, index: number): Json[] {
  const start = (content_block: Json): Json => ({ type: 'content_block_start', index, content_block });
  const delta = (d: Json): Json => ({ type: 'content_block_delta', index, delta: d });
  const out: Json[] = [];
  if (block.type === 'text') {
    const { citations, ...rest } = block;
    out.push(start(citations ? { ...rest, text: '', citations: [] } : { ...rest, text: '' }));
    for (const citation of (citations ?? []) as Json[]) out.push(delta({ type: 'citations_delta', citation }));
    out.push(delta({ type: 'text_delta', text: block.text ?? '' }));
  } else if (block.type === 'thinking') {
    out.push(start({ ...block, thinking: '', signature: '' }));
    out.push(delta({ type: 'thinking_delta', thinking: block.thinking ?? '' }));
    if (typeof block.signature === 'string') out.push(delta({ type: 'signature_delta', signature: block.signature }));
  } else if ((block.type === 'tool_use' || block.type === 'server_tool_use') && block.input !== undefined) {
    out.push(start({ ...block, input: {} }));
    out.push(delta({ type: 'input_json_delta', partial_json: JSON.stringify(block.input) }));
  } else {
    out.push(start(block)); // redacted thinking, server-tool results: whole at their start
  }
  out.push({ type: 'content_block_stop', index });
  return out;
}

/** A message as the events its stream would have carried: message_start (no content yet), its blocks, message_delta, message_stop. */
export function messagesJsonToChunks(body: Json): Json[] {
  const usage = (body.usage ?? {}) as Json;
  const { content, stop_reason, stop_sequence, ...rest } = body;
  const events: Json[] = [{ type: 'message_start', message: { ...rest, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } } }];
  ((content ?? []) as Json[]).forEach((b, i) => events.push(...blockEvents(b, i)));
  events.push({ type: 'message_delta', delta: { stop_reason: stop_reason ?? null, stop_sequence: stop_sequence ?? null }, usage: { output_tokens: usage.output_tokens ?? 0 } });
  events.push({ type: 'message_stop' });
  return events;
}

const TYPE_FIRST = '{"type":"';

/**
 * The SSE event name of a Messages stream chunk: its data's `type`; undefined when it has none.
 * Anthropic writes `type` first, so a replay reads it without parsing the event.
 */
export function messagesEventName(data: string): string | undefined {
  if (data.startsWith(TYPE_FIRST)) {
    const end = data.indexOf('"', TYPE_FIRST.length);
    const name = data.slice(TYPE_FIRST.length, end);
    if (end > 0 && /^[a-z_]+$/.test(name)) return name;
  }
  try {
    const t = (JSON.parse(data) as Json | null)?.type;
    return typeof t === 'string' ? t : undefined;
  } catch {
    return undefined;
  }
}
