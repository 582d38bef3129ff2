/**
 * The cache on /v1/messages, read by the official Anthropic SDK: a JSON answer replayed as it was
 * sent, a stream replayed as Anthropic's named events, and each form answered from the other.
 * A token count is never cached.
 */
import { describe, expect, it } from 'vitest';
import { post } from '../helpers/http.js';
import { sseEvent } from '../fakes/anthropic-server.js';
import { ANTHROPIC_KEY, useDoor } from './_door.js';

const door = useDoor();
const config = (cache: Record<string, unknown> = { mode: 'simple', max_age: 60 }) => ({
  provider: 'anthropic',
  api_key: ANTHROPIC_KEY,
  custom_host: door.fake.baseUrl,
  cache,
});
const client = (headers: Record<string, string> = {}) => door.sdk({ 'x-gateway-virtual-key': null, 'x-gateway-config': JSON.stringify(config()), ...headers });
const ask = (text: string) => ({ model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user' as const, content: text }] });
const raw = (extra: Record<string, string> = {}) =>
  door.gw.headers({ 'x-gateway-config': JSON.stringify(config()), 'anthropic-version': '2023-06-01', ...extra });

const SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds';

/** An answer with every kind of block a replay has to rebuild: thinking with its signature, text, a tool call. */
const RICH = {
  id: 'msg_rich',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'thinking', thinking: 'The user wants the weather.', signature: SIGNATURE },
    { type: 'text', text: 'Let me look.' },
    { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 40, output_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 300 },
};

/** The same answer as Anthropic streams it: tool input in pieces, a ping between blocks. */
const RICH_FRAMES = [
  sseEvent('message_start', { message: { ...RICH, content: [], stop_reason: null, usage: { ...RICH.usage, output_tokens: 1 } } }),
  sseEvent('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  sseEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'The user wants ' } }),
  sseEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'the weather.' } }),
  sseEvent('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } }),
  sseEvent('content_block_stop', { index: 0 }),
  sseEvent('ping'),
  sseEvent('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
  sseEvent('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Let me look.' } }),
  sseEvent('content_block_stop', { index: 1 }),
  sseEvent('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } }),
  sseEvent('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"city": "Pa' } }),
  sseEvent('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: 'ris", "days": [1, 2]}' } }),
  sseEvent('content_block_stop', { index: 2 }),
  sseEvent('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 25 } }),
  sseEvent('message_stop'),
];

describe('the cache on /v1/messages', () => {
  it('a JSON answer: a hit is the same bytes, then the same request streamed is its events, read by messages.stream()', async () => {
    door.fake.enqueue('/v1/messages', { json: RICH });
    const first = await post(`${door.gw.url}/v1/messages`, raw(), ask('json first'));
    const second = await post(`${door.gw.url}/v1/messages`, raw(), ask('json first'));
    expect([first.cacheStatus, second.cacheStatus]).toEqual(['MISS', 'HIT']);
    expect(second.text).toBe(first.text);

    const stream = client().messages.stream(ask('json first'));
    const events: string[] = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const final = await stream.finalMessage();
    expect(door.fake.requests).toHaveLength(1);
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    expect(final.content).toEqual(RICH.content);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.usage).toMatchObject({ input_tokens: 40, output_tokens: 25, cache_read_input_tokens: 300 });
  });

  it('a stream: a hit is the same events, named, byte for byte; then the same request as JSON is the message it carried', async () => {
    door.fake.enqueue('/v1/messages', { frames: RICH_FRAMES });
    const body = { ...ask('stream first'), stream: true };
    const first = await post(`${door.gw.url}/v1/messages`, raw(), body);
    const second = await post(`${door.gw.url}/v1/messages`, raw(), body);
    expect([first.cacheStatus, second.cacheStatus]).toEqual(['MISS', 'HIT']);
    expect(first.text).toBe(RICH_FRAMES.join(''));
    expect(second.text).toBe(first.text);

    const { data, response } = await client().messages.create(ask('stream first')).withResponse();
    expect(response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(door.fake.requests).toHaveLength(1);
    expect(data).toEqual(RICH);
  });

  it('the key is the canonical request: key order, `stream` and the beta flags’ order do not matter; the body and the beta flags do', async () => {
    const a = await post(`${door.gw.url}/v1/messages`, raw(), { model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'keyed' }] });
    const b = await post(`${door.gw.url}/v1/messages`, raw(), { messages: [{ content: 'keyed', role: 'user' }], max_tokens: 256, model: 'claude-sonnet-4-5', stream: false });
    const c = await post(`${door.gw.url}/v1/messages`, raw(), { model: 'claude-sonnet-4-5', max_tokens: 257, messages: [{ role: 'user', content: 'keyed' }] });
    const d = await post(`${door.gw.url}/v1/messages`, raw({ 'anthropic-beta': 'interleaved-thinking-2025-05-14,context-1m-2025-08-07' }), ask('keyed'));
    const e = await post(`${door.gw.url}/v1/messages`, raw({ 'anthropic-beta': 'context-1m-2025-08-07, interleaved-thinking-2025-05-14' }), ask('keyed'));
    expect([a.cacheStatus, b.cacheStatus, c.cacheStatus, d.cacheStatus, e.cacheStatus]).toEqual(['MISS', 'HIT', 'MISS', 'MISS', 'HIT']);
    expect(door.fake.requests).toHaveLength(3);
  });

  it('semantic mode: a prompt worded alike is a SEMANTIC_HIT', async () => {
    const semantic = (text: string) =>
      post(`${door.gw.url}/v1/messages`, door.gw.headers({ 'x-gateway-config': JSON.stringify(config({ mode: 'semantic', max_age: 60, similarity_threshold: 0.8 })), 'anthropic-version': '2023-06-01' }), ask(text));
    const first = await semantic('What is the capital city of France, please?');
    const second = await semantic('what is the capital city of France please');
    expect([first.cacheStatus, second.cacheStatus]).toEqual(['MISS', 'SEMANTIC_HIT']);
    expect(second.json.content).toEqual(first.json.content);
  });

  it('a token count is never cached', async () => {
    const count = () => client().messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'count me' }] }).withResponse();
    const first = await count();
    const second = await count();
    expect(first.response.headers.get('x-gateway-cache-status')).toBe('DISABLED');
    expect(second.response.headers.get('x-gateway-cache-status')).toBe('DISABLED');
    expect(second.data).toEqual(first.data);
    expect(door.fake.requests).toHaveLength(2);
  });
});
