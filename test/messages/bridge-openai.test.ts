import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { chatCompletion, FakeOpenAI, sseFrames } from '../fakes/openai-server.js';
import { post } from '../helpers/http.js';
import { configClient, useFakeGateway } from './_door.js';

/** The Messages door in front of OpenAI: the official Anthropic SDK, the request translated to chat completions and back. */
const rig = useFakeGateway(() => FakeOpenAI.start());
const target = () => ({ provider: 'openai', api_key: 'sk-openai-bridge', custom_host: rig.fake.baseUrl });
const client = (): Anthropic => configClient(rig.gw, target());
const failure = <T>(p: Promise<T>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);

const weather = { name: 'weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const toolCall = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });
/** Sampling fields (a variable: this SDK's types leave them out, the API takes them). */
const sampling = { temperature: 0.5, top_p: 0.9, top_k: 40 };
const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('messages.create through chat completions (OpenAI)', () => {
  it('system blocks, sampling fields, stop sequences and the user id become chat fields; the answer is a message object', async () => {
    const msg = await client().messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 100,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'Answer in English.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'ping', cache_control: { type: 'ephemeral' } }] }],
      stop_sequences: ['END'],
      ...sampling,
      metadata: { user_id: 'user-7' },
    });
    const [up] = await rig.fake.waitForRequests(1);
    expect(up!.path).toBe('/v1/chat/completions');
    expect(up!.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.\n\nAnswer in English.' },
        { role: 'user', content: [{ type: 'text', text: 'ping' }] },
      ],
      max_completion_tokens: 100,
      stop: ['END'],
      user: 'user-7',
      temperature: 0.5,
      top_p: 0.9,
    });
    expect(msg.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(msg).toMatchObject({ type: 'message', role: 'assistant', model: 'gpt-4o-mini', content: [{ type: 'text', text: 'echo: ping' }], stop_reason: 'end_turn', stop_sequence: null });
    expect(msg.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
  });

  it('tools, tool choice and a tool-use turn go as chat tools, tool_calls and tool messages; a tool call comes back as a tool_use block, cache reads outside input_tokens', async () => {
    rig.fake.enqueue('/v1/chat/completions', {
      json: {
        ...chatCompletion(''),
        choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [toolCall('call_2', 'weather', '{"city":"Oslo"}')] } }],
        usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129, prompt_tokens_details: { cached_tokens: 100 } },
      },
    });
    const msg = await client().messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 50,
      tools: [weather],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      messages: [
        { role: 'user', content: 'Weather in Paris, then Oslo?' },
        { role: 'assistant', content: [{ type: 'text', text: 'Paris first.' }, { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_1x1 } }] },
            { type: 'text', text: 'Now Oslo.' },
          ],
        },
      ],
    });
    const [up] = await rig.fake.waitForRequests(1);
    expect(up!.body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'weather', description: 'Weather of a city', parameters: weather.input_schema } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      messages: [
        { role: 'user', content: 'Weather in Paris, then Oslo?' },
        { role: 'assistant', content: 'Paris first.', tool_calls: [toolCall('toolu_1', 'weather', '{"city":"Paris"}')] },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1x1}` } }, { type: 'text', text: 'Now Oslo.' }] },
      ],
    });
    expect(msg.content).toEqual([{ type: 'tool_use', id: 'call_2', name: 'weather', input: { city: 'Oslo' } }]);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.usage).toMatchObject({ input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 9 });
    const line = rig.gw.logs.findLast((l) => l.path === '/v1/messages');
    expect(line?.usage).toMatchObject({ prompt_tokens: 120, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 100 } });
  });

  it('a length stop is max_tokens; a named tool choice is a function choice', async () => {
    rig.fake.enqueue('/v1/chat/completions', { json: { ...chatCompletion('cut sh'), choices: [{ index: 0, finish_reason: 'length', message: { role: 'assistant', content: 'cut sh' } }] } });
    const msg = await client().messages.create({ model: 'gpt-4o-mini', max_tokens: 2, tools: [weather], tool_choice: { type: 'tool', name: 'weather' }, messages: [{ role: 'user', content: 'long story' }] });
    expect(msg.stop_reason).toBe('max_tokens');
    expect(rig.fake.requests.at(-1)!.body.tool_choice).toEqual({ type: 'function', function: { name: 'weather' } });
  });

  it('what chat cannot carry is a 400 naming it: a server tool, a PDF document', async () => {
    const server = await failure(client().messages.create({ model: 'gpt-4o-mini', max_tokens: 9, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'news?' }] }));
    expect(server).toBeInstanceOf(Anthropic.BadRequestError);
    expect((server as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', param: 'tools[0].type' } });
    const pdf = { type: 'document' as const, source: { type: 'base64' as const, media_type: 'application/pdf' as const, data: 'JVBERi0=' } };
    const doc = await failure(client().messages.create({ model: 'gpt-4o-mini', max_tokens: 9, messages: [{ role: 'user', content: [pdf] }] }));
    expect((doc as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ error: { param: 'messages[0].content[0].source.type' } });
    expect(rig.fake.requests).toHaveLength(0);
  });
});

describe('messages.stream through chat completions (OpenAI)', () => {
  it('text: Anthropic’s events in Anthropic’s order, usage asked for and reported in message_delta', async () => {
    const stream = client().messages.stream({ model: 'gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const final = await stream.finalMessage();
    expect(rig.fake.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(final.content).toEqual([{ type: 'text', text: 'Hello' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 10, output_tokens: 2 });
    expect(types).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  });

  it('tool use: a tool_use block filled by input_json_delta, parsed by the SDK; each block closed before the next opens', async () => {
    const base = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini' };
    const ch = (delta: object, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    rig.fake.enqueue('/v1/chat/completions', {
      stream: {
        frames: sseFrames([
          ch({ role: 'assistant', content: 'Checking.' }),
          ch({ tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'weather', arguments: '' } }] }),
          ch({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
          ch({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
          ch({}, 'tool_calls'),
          { ...base, choices: [], usage: { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37, prompt_tokens_details: { cached_tokens: 10 } } },
        ]),
      },
    });
    const raw = await post(`${rig.gw.url}/v1/messages`, rig.gw.headers({ 'x-gateway-config': JSON.stringify(target()) }), { model: 'gpt-4o-mini', max_tokens: 20, tools: [weather], messages: [{ role: 'user', content: 'Oslo?' }], stream: true });
    const events = raw.text.split('\n\n').filter(Boolean).map((f) => {
      const [ev, data] = f.split('\n');
      return { name: ev!.slice('event: '.length), data: JSON.parse(data!.slice('data: '.length)) };
    });
    expect(events.every((e) => e.name === e.data.type)).toBe(true);
    expect(events.map((e) => [e.name, e.data.index ?? null])).toEqual([
      ['message_start', null],
      ['content_block_start', 0],
      ['content_block_delta', 0],
      ['content_block_stop', 0],
      ['content_block_start', 1],
      ['content_block_delta', 1],
      ['content_block_delta', 1],
      ['content_block_stop', 1],
      ['message_delta', null],
      ['message_stop', null],
    ]);
    expect(events[4]!.data.content_block).toEqual({ type: 'tool_use', id: 'call_9', name: 'weather', input: {} });
    expect(events[8]!.data).toEqual({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 10, output_tokens: 7 } });

    // A provider that sends a whole call in one chunk.
    rig.fake.enqueue('/v1/chat/completions', {
      stream: { frames: sseFrames([ch({ tool_calls: [{ index: 0, id: 'call_3', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }] }), ch({}, 'tool_calls')]) },
    });
    const final = await client().messages.stream({ model: 'gpt-4o-mini', max_tokens: 20, tools: [weather], messages: [{ role: 'user', content: 'Rome?' }] }).finalMessage();
    expect(final.content).toEqual([{ type: 'tool_use', id: 'call_3', name: 'weather', input: { city: 'Rome' } }]);
    expect(final.stop_reason).toBe('tool_use');
  });
});

describe('count_tokens on a target without a count endpoint', () => {
  it('messages.countTokens is the gateway’s estimate: the provider is not called, more text counts more', async () => {
    const ask = (text: string) => client().messages.countTokens({ model: 'gpt-4o-mini', system: 'Be brief.', messages: [{ role: 'user', content: text }], tools: [weather] });
    const short = await ask('hi');
    const long = await ask('hi '.repeat(200));
    expect(short.input_tokens).toBeGreaterThan(10);
    expect(long.input_tokens - short.input_tokens).toBeGreaterThanOrEqual(190);
    expect(rig.fake.requests).toHaveLength(0);
    const line = rig.gw.logs.findLast((l) => l.path === '/v1/messages/count_tokens');
    expect([line?.status, line?.usage]).toEqual([200, undefined]);
  });

  it('a count of what the target could not take is the same 400 as the message would be', async () => {
    const err = await failure(client().messages.countTokens({ model: 'gpt-4o-mini', tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'x' }] }));
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ error: { param: 'tools[0].type' } });
  });
});

describe('the cache in front of a target reached through chat', () => {
  const cached = () => configClient(rig.gw, { ...target(), cache: { mode: 'simple', max_age: 60 } });
  const ask = { model: 'gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user' as const, content: 'cache me' }] };

  it('a translated stream is stored as Anthropic’s events: the same request as JSON is a hit, the message it carried', async () => {
    const streamed = await cached().messages.stream(ask).finalMessage();
    const { data, response } = await cached().messages.create(ask).withResponse();
    expect(response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(rig.fake.requests).toHaveLength(1);
    expect(data).toMatchObject({ id: streamed.id, content: [{ type: 'text', text: 'Hello' }], stop_reason: 'end_turn' });
  });
});
