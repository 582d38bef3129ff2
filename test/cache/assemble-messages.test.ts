import { describe, expect, it } from 'vitest';
import { messagesChunksToJson, messagesEventName, messagesJsonToChunks } from '../../src/cache/assemble-messages.js';

/** Every kind of block a Messages answer carries, with the fields a replay must keep. */
const MESSAGE = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'thinking', thinking: 'Search first.', signature: 'sig-1' },
    { type: 'redacted_thinking', data: 'opaque' },
    { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'weather' } },
    { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://example.com', title: 'W' }] },
    { type: 'text', text: 'Sunny.', citations: [{ type: 'web_search_result_location', url: 'https://example.com', cited_text: 'sun' }] },
    { type: 'tool_use', id: 'toolu_1', name: 'noop', input: {} },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 9, cache_creation_input_tokens: 2, cache_read_input_tokens: 3 },
};

describe('Messages answers assembled for the cache and output checks', () => {
  it('a message as its events and back is the same message', () => {
    const events = messagesJsonToChunks(MESSAGE);
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(['message_start', 'content_block_start']);
    expect(events.at(-2)).toEqual({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } });
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
    expect(messagesChunksToJson(events)).toEqual(MESSAGE);
  });

  it('a stream’s deltas joined: text, tool input in pieces (an empty input is {}), usage of message_delta over message_start’s', () => {
    const json = messagesChunksToJson([
      { type: 'message_start', message: { id: 'm', content: [], stop_reason: null, usage: { input_tokens: 4, output_tokens: 1 } } },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 't', name: 'f', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '1}' } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'b' } },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'u', name: 'g', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7, input_tokens: null } },
    ]);
    expect(json).toEqual({
      id: 'm',
      content: [{ type: 'text', text: 'ab' }, { type: 'tool_use', id: 't', name: 'f', input: { a: 1 } }, { type: 'tool_use', id: 'u', name: 'g', input: {} }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 4, output_tokens: 7 },
    });
  });

  it('an event’s SSE name is its data’s type', () => {
    expect(messagesEventName('{"type":"ping"}')).toBe('ping');
    expect(messagesEventName('{"index":0,"type":"content_block_stop"}')).toBe('content_block_stop');
    expect(messagesEventName('{"type":"a\\"b"}')).toBe('a"b');
    expect(messagesEventName('not json')).toBeUndefined();
    expect(messagesEventName('[1]')).toBeUndefined();
  });
});
