import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { post } from '../helpers/http.js';
import { messageStream, sseEvent } from '../fakes/anthropic-server.js';
import { useDoor } from './_door.js';

const door = useDoor();

/** A thinking block with its signature, then text: as Anthropic streams extended thinking. */
const THINKING_FRAMES = [
  sseEvent('message_start', {
    message: {
      id: 'msg_think', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 1, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000 },
    },
  }),
  sseEvent('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  sseEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Two plus two ' } }),
  sseEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'is four.' } }),
  sseEvent('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' } }),
  sseEvent('content_block_stop', { index: 0 }),
  sseEvent('ping'),
  sseEvent('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
  sseEvent('content_block_delta', { index: 1, delta: { type: 'text_delta', text: '4' } }),
  sseEvent('content_block_stop', { index: 1 }),
  sseEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 30 } }),
  sseEvent('message_stop'),
];

const ask = { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'What is 2+2?' }] };

describe('Messages streams through the gateway from Anthropic', () => {
  it('are byte-identical: every event, ping included, with its name and data as Anthropic sent it, nothing after message_stop', async () => {
    door.fake.enqueue('/v1/messages', { frames: THINKING_FRAMES });
    const res = await post(`${door.gw.url}/v1/messages`, door.gw.headers({ 'x-gateway-virtual-key': 'claude', 'anthropic-version': '2023-06-01' }), { ...ask, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.text).toBe(THINKING_FRAMES.join(''));
  });

  it('even when the upstream splits its events across reads', async () => {
    const whole = THINKING_FRAMES.join('');
    const pieces = whole.match(/[\s\S]{1,7}/g)!;
    door.fake.enqueue('/v1/messages', { frames: pieces });
    const res = await post(`${door.gw.url}/v1/messages`, door.gw.headers({ 'x-gateway-virtual-key': 'claude', 'anthropic-version': '2023-06-01' }), { ...ask, stream: true });
    expect(res.text).toBe(whole);
  });

  it('messages.stream(): thinking with its signature, then text; the final message as Anthropic built it', async () => {
    door.fake.enqueue('/v1/messages', { frames: THINKING_FRAMES });
    const stream = door.sdk().messages.stream({ ...ask, thinking: { type: 'enabled', budget_tokens: 512 } });
    const events: string[] = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([
      { type: 'thinking', thinking: 'Two plus two is four.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' },
      { type: 'text', text: '4' },
    ]);
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 30, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000 });
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    const [up] = await door.fake.waitForRequests(1);
    expect(up!.body).toEqual({ ...ask, thinking: { type: 'enabled', budget_tokens: 512 }, stream: true });
  });

  it('messages.stream(): text, and a tool use whose input arrives as JSON deltas', async () => {
    door.fake.enqueue('/v1/messages', {
      frames: messageStream([{ text: ['Let me ', 'look.'] }, { tool: { id: 'toolu_1', name: 'get_weather', json: ['{"city":', '"Paris"}'] } }], { stopReason: 'tool_use' }),
    });
    const tools = [{ name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const stream = door.sdk().messages.stream({ ...ask, tools });
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    expect(text).toBe('Let me look.');
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content[1]).toEqual({ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } });
  });

  it('the request log prices cache reads and writes as prompt tokens (usage in the gateway’s shape)', async () => {
    door.fake.enqueue('/v1/messages', { frames: THINKING_FRAMES });
    await post(`${door.gw.url}/v1/messages`, door.gw.headers({ 'x-gateway-virtual-key': 'claude', 'anthropic-version': '2023-06-01' }), { ...ask, stream: true });
    const line = door.gw.logs.findLast((l) => l.path === '/v1/messages');
    expect(line).toMatchObject({
      status: 200,
      stream: true,
      provider: 'anthropic',
      usage: { prompt_tokens: 2112, completion_tokens: 30, total_tokens: 2142, prompt_tokens_details: { cached_tokens: 2000, cache_write_tokens: 100 } },
    });
    expect(line!.cost).toBeGreaterThan(0);
  });
});
