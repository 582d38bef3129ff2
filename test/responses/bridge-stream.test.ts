import { describe, expect, it } from 'vitest';
import { responsesChunk, responsesStreamEnd, responsesStreamStart } from '../../src/providers/bridges/responses-stream.js';
import type { StreamChunk } from '../../src/providers/types.js';

const chunk = (delta: object, finish: string | null = null): StreamChunk => ({
  data: JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm-1', choices: [{ index: 0, delta, finish_reason: finish }] }),
});

function run(chunks: StreamChunk[]): Record<string, any>[] {
  let state = responsesStreamStart({ model: 'm', input: 'x' }, 1_700_000_000_000);
  const out: StreamChunk[] = [];
  for (const c of chunks) {
    const step = responsesChunk(state, c);
    state = step.state;
    out.push(...step.chunks);
  }
  out.push(...responsesStreamEnd(state));
  for (const c of out) expect(c.event).toBe(JSON.parse(c.data).type);
  return out.map((c) => JSON.parse(c.data));
}

describe('the chat stream → Responses events reducer', () => {
  it('text then two tool calls: each item closed before the next opens, at its own output index', () => {
    const events = run([
      chunk({ role: 'assistant', content: 'Let me check.' }),
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{"x":1}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    const items = events.filter((e) => e.type === 'response.output_item.done');
    expect(items.map((e) => [e.output_index, e.item.type, e.item.call_id ?? e.item.content[0].text])).toEqual([
      [0, 'message', 'Let me check.'],
      [1, 'function_call', 'a'],
      [2, 'function_call', 'b'],
    ]);
    const done = events.at(-1)!;
    expect(done.type).toBe('response.completed');
    expect(done.response.created_at).toBe(1_700_000_000);
    expect(done.response.model).toBe('m-1');
    expect(done.response.output).toEqual(items.map((e) => e.item));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it('a stream without content still answers an empty message and completes', () => {
    const events = run([chunk({ role: 'assistant' }), chunk({}, 'stop')]);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.at(-1)!.response.output[0].content[0].text).toBe('');
  });

  it("a usage the provider's translation kept to itself (an empty chunk) still reaches the response and the last event", () => {
    let state = responsesStreamStart({ model: 'm' }, 0);
    state = responsesChunk(state, chunk({ content: 'hi' }, 'stop')).state;
    state = responsesChunk(state, { data: '', usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }).state;
    const last = responsesStreamEnd(state).at(-1)!;
    expect(last.usage).toEqual({ prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 });
    expect(JSON.parse(last.data).response.usage).toMatchObject({ input_tokens: 5, output_tokens: 1, total_tokens: 6 });
  });
});
