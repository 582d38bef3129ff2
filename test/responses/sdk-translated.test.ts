import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatChunks, chatCompletion, FakeOpenAI, sseFrames } from '../fakes/openai-server.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';

/**
 * The official openai SDK's `responses.*` against the gateway in front of providers without a
 * Responses API: an OpenAI-compatible host (chat completions) and Anthropic (messages).
 */
const ANT_KEY = 'sk-ant-responses';

let chatHost: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;

function sdk(provider: 'openai-compatible' | 'anthropic'): OpenAI {
  const host = provider === 'anthropic' ? anthropic.baseUrl : chatHost.baseUrl;
  return new OpenAI({
    apiKey: provider === 'anthropic' ? ANT_KEY : 'sk-compat',
    baseURL: `${gw.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': gw.key, 'x-gateway-provider': provider, 'x-gateway-custom-host': host },
  });
}

beforeAll(async () => {
  chatHost = await FakeOpenAI.start();
  anthropic = await FakeAnthropic.start(ANT_KEY);
  gw = await startGateway();
});

afterEach(() => {
  chatHost.reset();
  anthropic.reset();
});

afterAll(async () => {
  await gw?.close();
  await chatHost?.close();
  await anthropic?.close();
});

describe('responses.create through chat completions', () => {
  it('a string input: a chat request goes out; the answer is a response object with the defaults and the usage', async () => {
    const r = await sdk('openai-compatible').responses.create({ model: 'gpt-4o-mini', input: 'ping', instructions: 'Be brief.' });
    const [up] = await chatHost.waitForRequests(1);
    expect(up!.path).toBe('/v1/chat/completions');
    expect(up!.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'ping' },
    ]);
    expect(r.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(r).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'gpt-4o-mini',
      instructions: 'Be brief.',
      temperature: 1,
      top_p: 1,
      parallel_tool_calls: true,
      truncation: 'disabled',
      tool_choice: 'auto',
      tools: [],
      metadata: {},
      error: null,
      incomplete_details: null,
    });
    expect(r.output_text).toBe('echo: ping');
    // The fields the Open Responses specification requires of a response object.
    const required = 'id object created_at completed_at status incomplete_details model previous_response_id instructions output error tools tool_choice truncation parallel_tool_calls text top_p presence_penalty frequency_penalty top_logprobs temperature reasoning user usage max_output_tokens max_tool_calls store background service_tier metadata safety_identifier prompt_cache_key';
    expect(required.split(' ').filter((k) => !(k in r))).toEqual([]);
    expect(r.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'echo: ping', annotations: [] }] });
    expect(r.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } });
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
  });

  it('function tools and calls: tools, the call and its output go as chat tools, tool_calls and a tool message; a call comes back as a function_call item', async () => {
    chatHost.enqueue('/v1/chat/completions', {
      json: {
        ...chatCompletion(''),
        choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] } }],
        usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25, prompt_tokens_details: { cached_tokens: 8 }, completion_tokens_details: { reasoning_tokens: 2 } },
      },
    });
    const tool = { type: 'function' as const, name: 'weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false };
    const r = await sdk('openai-compatible').responses.create({
      model: 'gpt-4o-mini',
      tools: [tool],
      tool_choice: { type: 'function', name: 'weather' },
      max_output_tokens: 100,
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris, then Oslo?' }] },
        { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      ],
    });
    const [up] = await chatHost.waitForRequests(1);
    expect(up!.body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'weather', description: 'Weather of a city', parameters: tool.parameters, strict: false } }],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      max_completion_tokens: 100,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris, then Oslo?' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    });
    expect(up!.body.input).toBeUndefined();
    expect(r.status).toBe('completed');
    expect(r.output).toEqual([{ id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'completed', call_id: 'call_2', name: 'weather', arguments: '{"city":"Oslo"}' }]);
    expect(r.usage).toEqual({ input_tokens: 20, input_tokens_details: { cached_tokens: 8 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 25 });
  });

  it('a length stop is `incomplete` with reason max_output_tokens', async () => {
    chatHost.enqueue('/v1/chat/completions', { json: { ...chatCompletion('cut sh'), choices: [{ index: 0, finish_reason: 'length', message: { role: 'assistant', content: 'cut sh' } }] } });
    const r = await sdk('openai-compatible').responses.create({ model: 'gpt-4o-mini', input: 'long story', max_output_tokens: 2 });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.output_text).toBe('cut sh');
  });

  it('Anthropic is reached through its own translation of the chat request', async () => {
    const r = await sdk('anthropic').responses.create({ model: 'claude-sonnet-4-5', input: 'hello', instructions: 'sys', temperature: 0.5, metadata: { a: 'b' } });
    const [up] = await anthropic.waitForRequests(1);
    expect(up!.path).toBe('/v1/messages');
    expect(up!.body).toMatchObject({ model: 'claude-sonnet-4-5', system: [{ type: 'text', text: 'sys' }], messages: [{ role: 'user', content: 'hello' }], temperature: 0.5 });
    expect(r).toMatchObject({ status: 'completed', model: 'claude-sonnet-4-5', temperature: 0.5, metadata: { a: 'b' }, usage: { input_tokens: 10, output_tokens: 3, total_tokens: 13 } });
    expect(r.output_text).toBe('echo: hello');
  });

  it('what chat cannot carry is a 400 naming the field', async () => {
    const e = await sdk('openai-compatible').responses.create({ model: 'gpt-4o-mini', input: 'x', tools: [{ type: 'web_search' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect((e as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tools[0].type');
    expect(chatHost.requests).toHaveLength(0);
  });
});

describe('POST /v1/responses validation', () => {
  const bad = async (body: Record<string, unknown>): Promise<InstanceType<typeof OpenAI.BadRequestError>> =>
    (await sdk('openai-compatible').responses.create({ model: 'gpt-4o-mini', input: 'x', ...body } as never).catch((x: unknown) => x)) as InstanceType<typeof OpenAI.BadRequestError>;

  it.each([
    [{ temperature: 2.5 }, 'temperature'],
    [{ top_p: -0.1 }, 'top_p'],
    [{ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
    [{ metadata: { ['k'.repeat(65)]: 'v' } }, `metadata.${'k'.repeat(65)}`],
    [{ metadata: { k: 'v'.repeat(513) } }, 'metadata.k'],
    [{ truncation: 'middle' }, 'truncation'],
    [{ input: 42 }, 'input'],
  ])('%j is a 400 naming %s', async (body, param) => {
    const e = await bad(body);
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.param).toBe(param);
  });

  it('the limits themselves pass, and unknown fields are passed on', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(512)]));
    const r = await sdk('openai-compatible').responses.create({ model: 'gpt-4o-mini', input: 'x', temperature: 2, top_p: 0, metadata, top_k: 3 } as never);
    expect(r.status).toBe('completed');
    const [up] = await chatHost.waitForRequests(1);
    expect(up!.body).toMatchObject({ temperature: 2, top_p: 0, top_k: 3 });
    expect(up!.body.metadata).toBeUndefined();
  });
});

describe('responses.stream() through chat completions', () => {
  const collect = async (stream: AsyncIterable<{ type: string; sequence_number: number }>) => {
    const events: { type: string; sequence_number: number }[] = [];
    for await (const ev of stream) events.push(ev);
    return events;
  };

  it('text: the Responses events in order, numbered, and the final response with usage', async () => {
    chatHost.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'], { includeUsage: true, usage: { prompt_tokens: 7, completion_tokens: 2 } })) } });
    const stream = sdk('openai-compatible').responses.stream({ model: 'gpt-4o-mini', input: 'hi' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const events = await collect(stream);
    const final = await stream.finalResponse();
    const [up] = await chatHost.waitForRequests(1);
    expect(up!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(final.output_text).toBe('Hello');
    expect(final).toMatchObject({ status: 'completed', usage: { input_tokens: 7, output_tokens: 2, total_tokens: 9 } });
    const line = gw.logs.filter((l) => l.path === '/v1/responses' && l.usage).at(-1);
    expect(line?.usage, 'the usage is counted (request log)').toMatchObject({ prompt_tokens: 7, completion_tokens: 2 });
  });

  it('a function call streams as function_call_arguments deltas and ends in a function_call item', async () => {
    const chunk = (delta: object, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] });
    const call = (args: string, head?: object) => ({ tool_calls: [{ index: 0, ...head, function: { ...(head ? { name: 'weather' } : {}), arguments: args } }] });
    chatHost.enqueue('/v1/chat/completions', {
      stream: { frames: sseFrames([chunk({ role: 'assistant' }), chunk(call('', { id: 'call_9', type: 'function' })), chunk(call('{"city":')), chunk(call('"Oslo"}')), chunk({}, 'tool_calls')]) },
    });
    const stream = sdk('openai-compatible').responses.stream({ model: 'gpt-4o-mini', input: 'weather?', tools: [{ type: 'function', name: 'weather', parameters: {}, strict: false }] });
    const events = await collect(stream);
    const final = await stream.finalResponse();
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(final.output).toMatchObject([{ id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'completed', call_id: 'call_9', name: 'weather', arguments: '{"city":"Oslo"}' }]);
  });

  it('Anthropic: its stream becomes the same events', async () => {
    const stream = sdk('anthropic').responses.stream({ model: 'claude-sonnet-4-5', input: 'hey' });
    const events = await collect(stream);
    const final = await stream.finalResponse();
    expect(events[0]!.type).toBe('response.created');
    expect(events.at(-1)!.type).toBe('response.completed');
    expect(final.output_text).toBe('echo: hey');
    expect(final.usage).toMatchObject({ input_tokens: 10, output_tokens: expect.any(Number) });
  });

  it('a length stop ends in response.incomplete', async () => {
    const frames = sseFrames(chatChunks(['cut']).map((c: any) => (c.choices[0]?.finish_reason ? { ...c, choices: [{ ...c.choices[0], finish_reason: 'length' }] } : c)));
    chatHost.enqueue('/v1/chat/completions', { stream: { frames } });
    const events = await collect(sdk('openai-compatible').responses.stream({ model: 'gpt-4o-mini', input: 'x', max_output_tokens: 1 }));
    const last = events.at(-1) as unknown as { type: string; response: { status: string; incomplete_details: unknown } };
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });
});
