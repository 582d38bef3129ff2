import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { toChatBody } from '../../src/providers/bridges/messages-request.js';
import { messageObject, messagesUsage } from '../../src/providers/bridges/messages-answer.js';
import { messagesChunk, messagesStreamEnd, messagesStreamStart } from '../../src/providers/bridges/messages-stream.js';
import { chatPromptTokens, imageTokens, MAX_IMAGE_TOKENS } from '../../src/providers/bridges/count-tokens.js';
import { defaultProviders, ProviderRegistry } from '../../src/providers/registry.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import type { StreamChunk } from '../../src/providers/types.js';

type Json = Record<string, any>;
const thrown = (fn: () => unknown): GatewayError => {
  try {
    fn();
  } catch (e) {
    return e as GatewayError;
  }
  throw new Error('did not throw');
};
/** A PNG header of `w` × `h` as a data URL (only the header is read for the size). */
const png = (w: number, h: number): string => {
  const b = Buffer.alloc(24);
  b.writeUInt32BE(0x89504e47, 0);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return `data:image/png;base64,${b.toString('base64')}`;
};

describe('a Messages request → chat', () => {
  it('thinking, redacted thinking and server-tool blocks are dropped; a text document is text; a URL image is an image part', () => {
    const chat = toChatBody({
      model: 'm',
      messages: [
        { role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'the doc' } }, { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 't', signature: 's' },
            { type: 'redacted_thinking', data: 'd' },
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
            { type: 'text', text: 'Found ' },
            { type: 'text', text: 'it.' },
          ],
        },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'only thinking', signature: 's' }] },
      ],
    }, false);
    expect(chat.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'the doc' }, { type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] },
      { role: 'assistant', content: 'Found it.' },
    ]);
  });

  it('fields without a chat counterpart are dropped, unknown ones pass on; no tools, no tool choice; a count body has no max_tokens', () => {
    const chat = toChatBody({ model: 'm', messages: [], thinking: { type: 'enabled', budget_tokens: 9 }, top_k: 3, service_tier: 'auto', tool_choice: { type: 'none' }, seed: 7 }, false);
    expect(chat).toEqual({ model: 'm', messages: [], seed: 7 });
    const none = toChatBody({ model: 'm', messages: [], tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: { type: 'none', disable_parallel_tool_use: true } }, true);
    expect(none).toMatchObject({ tool_choice: 'none', stream: true, stream_options: { include_usage: true } });
    expect(none.parallel_tool_calls).toBeUndefined();
  });

  it('a tool description longer than OpenAI takes moves to the system message, under a heading the function points at', () => {
    const long = `Runs a command. ${'Quote paths with spaces. '.repeat(60)}`;
    const chat = toChatBody({ model: 'm', system: 'Be terse.', messages: [{ role: 'user', content: 'go' }], tools: [{ name: 'Bash', description: long, input_schema: { type: 'object' } }, { name: 'Read', description: 'Reads a file.', input_schema: { type: 'object' } }] }, false);
    expect(long.length).toBeGreaterThan(1024);
    expect((chat.messages as Json[])[0]).toEqual({ role: 'system', content: `Be terse.\n\n# Tool Bash\n\n${long}` });
    expect((chat.tools as Json[]).map((t) => t.function.description)).toEqual(['Described in the system message, under "# Tool Bash".', 'Reads a file.']);
    const alone = toChatBody({ model: 'm', messages: [], tools: [{ name: 'Bash', description: long, input_schema: { type: 'object' } }] }, false);
    expect(alone.messages).toEqual([{ role: 'system', content: `# Tool Bash\n\n${long}` }]);
  });

  it('a user id longer than OpenAI takes is sent as its SHA-256 (64 hex digits, the same for the same user)', () => {
    const long = `user_${'a'.repeat(64)}_account_1234_session_5678`;
    const user = toChatBody({ model: 'm', messages: [], metadata: { user_id: long } }, false).user;
    expect(user).toBe(createHash('sha256').update(long).digest('hex'));
    expect(toChatBody({ model: 'm', messages: [], metadata: { user_id: 'short-id' } }, false).user).toBe('short-id');
  });

  it('what chat cannot carry is a 400 naming the field', () => {
    const at = (body: Json) => {
      const e = thrown(() => toChatBody({ model: 'm', messages: [], ...body }, false));
      return [e.code, e.param];
    };
    expect(at({ tools: [{ name: 'f', input_schema: {} }, { type: 'bash_20250124', name: 'bash' }] })).toEqual(['invalid_request_body', 'tools[1].type']);
    expect(at({ mcp_servers: [{ type: 'url', url: 'https://m.test', name: 'm' }] })).toEqual(['invalid_request_body', 'mcp_servers']);
    expect(at({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'search_result', source: 's', title: 't', content: [] }] }] })).toEqual(['invalid_request_body', 'messages[0].content[1].type']);
    expect(at({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] })).toEqual(['invalid_request_body', 'messages[0].content[0].source.type']);
    expect(at({ system: [{ type: 'image' }] })).toEqual(['invalid_request_body', 'system[0].type']);
  });
});

describe('a chat completion → a message', () => {
  const chat = (message: Json, finish: string, extra: Json = {}) => ({ id: 'c', model: 'gpt-x', choices: [{ index: 0, message, finish_reason: finish, ...extra }] });

  it('stop reasons: a named stop sequence, a refusal, a content filter', () => {
    const stopped = messageObject({ stop_sequences: ['###'] }, chat({ content: 'a' }, 'stop', { stop_reason: '###' }), undefined);
    expect([stopped.stop_reason, stopped.stop_sequence]).toEqual(['stop_sequence', '###']);
    const plain = messageObject({ stop_sequences: ['###'] }, chat({ content: 'a' }, 'stop'), undefined);
    expect([plain.stop_reason, plain.stop_sequence]).toEqual(['end_turn', null]);
    const refused = messageObject({}, chat({ content: null, refusal: 'I cannot.' }, 'stop'), undefined);
    expect([refused.stop_reason, refused.content]).toEqual(['refusal', [{ type: 'text', text: 'I cannot.' }]]);
    expect(messageObject({}, chat({ content: '' }, 'content_filter'), undefined)).toMatchObject({ stop_reason: 'refusal', content: [] });
  });

  it('tool arguments that are not a JSON object are the provider’s fault, not garbled input', () => {
    const bad = chat({ content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }, 'tool_calls');
    expect(thrown(() => messageObject({}, bad, undefined)).code).toBe('upstream_invalid_response');
    expect(thrown(() => messageObject({}, { choices: [] }, undefined)).code).toBe('upstream_invalid_response');
  });

  it('usage: input tokens exclude cache reads and writes', () => {
    expect(messagesUsage({ prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 30 } })).toEqual({
      input_tokens: 10, cache_creation_input_tokens: 30, cache_read_input_tokens: 60, output_tokens: 5,
    });
    expect(messagesUsage(undefined)).toEqual({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 });
  });
});

describe('the chat stream → Anthropic events reducer', () => {
  const chunk = (delta: Json, finish: string | null = null, extra: Json = {}): StreamChunk => ({ data: JSON.stringify({ id: 'c', model: 'm-1', choices: [{ index: 0, delta, finish_reason: finish, ...extra }] }) });
  function run(chunks: StreamChunk[], body: Json = { model: 'm' }): { events: Json[]; chunks: StreamChunk[] } {
    let state = messagesStreamStart(body);
    const out: StreamChunk[] = [];
    for (const c of chunks) {
      const step = messagesChunk(state, c);
      state = step.state;
      out.push(...step.chunks);
    }
    out.push(...messagesStreamEnd(state));
    for (const c of out) expect(c.event).toBe(JSON.parse(c.data).type);
    return { events: out.map((c) => JSON.parse(c.data)), chunks: out };
  }

  it('two parallel tool calls: two tool_use blocks, each closed before the next opens', () => {
    const { events } = run([
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '1}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(events.map((e) => [e.type, e.index ?? null, e.content_block?.id ?? e.delta?.partial_json ?? e.delta?.stop_reason ?? null])).toEqual([
      ['message_start', null, null],
      ['content_block_start', 0, 'a'],
      ['content_block_delta', 0, '{}'],
      ['content_block_stop', 0, null],
      ['content_block_start', 1, 'b'],
      ['content_block_delta', 1, '{"x":'],
      ['content_block_delta', 1, '1}'],
      ['content_block_stop', 1, null],
      ['message_delta', null, 'tool_use'],
      ['message_stop', null, null],
    ]);
    expect(events[0]!.message).toMatchObject({ model: 'm-1', content: [], stop_reason: null, id: expect.stringMatching(/^msg_/) });
  });

  it('a usage the provider’s translation kept to itself reaches message_delta and its chunk (for accounting); a named stop sequence', () => {
    const usage = { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11, prompt_tokens_details: { cached_tokens: 4 } };
    const { events, chunks } = run([chunk({ content: 'hi' }, 'stop', { stop_reason: 'STOP!' }), { data: '', usage }], { model: 'm', stop_sequences: ['STOP!'] });
    const delta = events.at(-2)!;
    expect(delta).toEqual({ type: 'message_delta', delta: { stop_reason: 'stop_sequence', stop_sequence: 'STOP!' }, usage: { input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 4, output_tokens: 2 } });
    expect(chunks.at(-2)!.usage).toEqual(usage);
  });

  it('a refusal is a text block and stop_reason refusal; an empty stream is still a whole message', () => {
    expect(run([chunk({ refusal: 'No.' }), chunk({}, 'stop')]).events.at(-2)!.delta.stop_reason).toBe('refusal');
    expect(run([]).events.map((e) => e.type)).toEqual(['message_start', 'message_delta', 'message_stop']);
  });
});

describe('count_tokens estimated by the gateway', () => {
  it('images by Anthropic’s rule: width × height / 750, scaled to a long edge of 1,568, at most 1,600; unknown size 1,600', () => {
    expect(imageTokens(png(200, 300))).toBe(80);
    expect(imageTokens(png(1000, 1000))).toBe(1334);
    expect(imageTokens(png(4000, 1000))).toBe(Math.ceil((1568 * 392) / 750));
    expect(imageTokens('https://x.test/a.png')).toBe(MAX_IMAGE_TOKENS);
  });

  it('4 per message, each text, tool call and tool definition counted', () => {
    const count = (s: string) => s.length; // a counter that is easy to follow
    const chat = {
      messages: [
        { role: 'system', content: 'abc' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'x', function: { name: 'f', arguments: '{}' } }] },
        { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: png(75, 10) } }] },
      ],
      tools: [{ type: 'function', function: { name: 'f' } }],
    };
    expect(chatPromptTokens(chat, count)).toBe((4 + 3) + (4 + 1 + 2) + (4 + 2 + 1) + JSON.stringify({ name: 'f' }).length);
  });

  it('the registry answers a count itself for a provider without a count endpoint, and leaves Anthropic’s to Anthropic', () => {
    const registry = new ProviderRegistry(defaultProviders());
    const anthropic = registry.get('anthropic');
    expect(registry.serving(anthropic, 'count_tokens')).toBe(anthropic);
    expect(registry.serving(registry.get('openai'), 'count_tokens').answer).toBeTypeOf('function');
    expect(registry.serving(registry.get('vertex-ai'), 'count_tokens', 'gemini-2.5-flash').answer).toBeTypeOf('function');
  });
});
