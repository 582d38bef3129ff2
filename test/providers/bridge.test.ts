import { describe, expect, it } from 'vitest';
import { defaultProviders, ProviderRegistry } from '../../src/providers/registry.js';
import type { ChatBridge } from '../../src/providers/bridges/index.js';
import type { ProviderRequest, StreamChunk } from '../../src/providers/types.js';

/** A toy front door: `{ text }` in, `{ answer }` out; a stream's chunks named `piece`, closed by `end`. */
const toy: ChatBridge<{ pieces: number }> = {
  endpoint: 'responses',
  toChat: (req) => ({
    ...req,
    endpoint: 'chat',
    body: { model: req.body?.model, messages: [{ role: 'user', content: req.body?.text }], stream: req.stream },
  }),
  fromChatJson: (_req, chat) => {
    const body = chat.body as { choices: { message: { content: string } }[] };
    return { body: { answer: body.choices[0]!.message.content }, usage: chat.usage };
  },
  streamStart: () => ({ pieces: 0 }),
  fromChatChunk: (state, c) => {
    const delta = (JSON.parse(c.data) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content;
    const chunks: StreamChunk[] = delta === undefined ? [] : [{ data: JSON.stringify({ piece: delta }), event: 'piece' }];
    return { state: { pieces: state.pieces + chunks.length }, chunks };
  },
  streamEnd: (state) => [{ data: JSON.stringify({ pieces: state.pieces }), event: 'end' }],
};

const registry = new ProviderRegistry(defaultProviders(), {}, [toy]);
const request = (stream: boolean): ProviderRequest => ({ endpoint: 'responses', body: { model: 'm', text: 'hi' }, stream, headers: {} });

describe('chat bridges', () => {
  it('a provider without a path for the endpoint is reached through the bridge: a chat completions request goes out', () => {
    const anthropic = registry.serving(registry.get('anthropic'), 'responses');
    const up = anthropic.toProvider(request(false), { provider: 'anthropic', api_key: 'k' }, 'https://api.anthropic.com/v1');
    expect(up.path).toBe('/v1/messages');
    expect(JSON.parse(up.body!)).toMatchObject({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  });

  it("the provider's answer comes back in the front door's format, usage kept", () => {
    const groq = registry.serving(registry.get('groq'), 'responses');
    const text = JSON.stringify({
      id: 'c1',
      object: 'chat.completion',
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    });
    const r = groq.fromJson(request(false), text);
    expect(r.body).toEqual({ answer: 'hello' });
    expect(r.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 1 });
  });

  it("a stream's chat chunks become the front door's named events, and its end its closing ones", () => {
    const groq = registry.serving(registry.get('groq'), 'responses');
    const req = request(true);
    let state = groq.streamStart(req);
    const out: StreamChunk[] = [];
    for (const content of ['a', 'b']) {
      const step = groq.fromStreamEvent(state, { data: JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] }) });
      state = step.state;
      out.push(...step.chunks);
    }
    const done = groq.fromStreamEvent(state, { data: '[DONE]' });
    out.push(...done.chunks, ...groq.streamEnd(done.state));
    expect(out.map((c) => [c.event, c.data])).toEqual([
      ['piece', '{"piece":"a"}'],
      ['piece', '{"piece":"b"}'],
      ['end', '{"pieces":2}'],
    ]);
  });

  it('a provider with a path for the endpoint serves it itself; an endpoint without a bridge is left to the provider', () => {
    const openai = registry.get('openai');
    expect(registry.serving(openai, 'chat')).toBe(openai);
    expect(registry.serving(openai, 'responses'), 'OpenAI has its own Responses API').toBe(openai);
    expect(registry.serving(openai, 'messages')).toBe(openai);
    const anthropic = registry.get('anthropic');
    expect(registry.serving(anthropic, 'responses')).not.toBe(anthropic);
    expect(registry.serving(anthropic, 'responses'), 'made once per provider and endpoint').toBe(registry.serving(anthropic, 'responses'));
  });
});
