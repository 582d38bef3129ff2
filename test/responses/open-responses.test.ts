import { describe, expect, it } from 'vitest';
import { chatChunks, chatCompletion, sseFrames } from '../fakes/openai-server.js';
import { fakeResponseObject } from '../fakes/openai-responses.js';
import { gatewayAndFake } from './harness.js';
import { CASES, create, IMAGE_URL, responseErrors, stream, streamErrors, WEATHER_TOOL, type Target } from './open-responses-client.js';
import { responseResource, violations } from './open-responses-schema.js';

/**
 * The Open Responses specification's compliance cases (response schema, stream events, system
 * prompt, tools, image input, multi-turn) sent to POST /v1/responses, checked as its compliance
 * suite checks them: the gateway translating to a chat completions host (an OpenAI-compatible host
 * without /responses), and passing through to OpenAI's own Responses API.
 */
const env = gatewayAndFake();
const MODEL = 'gpt-4o-mini';
const target = (provider: 'openai-compatible' | 'openai'): Target => ({ url: env.gw.url, gatewayKey: env.gw.key, provider, host: env.fake.baseUrl });
const translated = () => target('openai-compatible');

const toolCall = { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Lisbon"}' } };

/** A chat stream whose answer is one tool call, its arguments in two pieces. */
function toolCallChunks(): object[] {
  const chunk = (delta: object, finish: string | null) => ({ id: 'chatcmpl-t', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }] });
  return [
    chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, null),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] }, null),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"Lisbon"}' } }] }, null),
    chunk({}, 'tool_calls'),
    { id: 'chatcmpl-t', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [], usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 } },
  ];
}

describe('Open Responses compliance: translated to chat completions', () => {
  it('basic response: the response object conforms to the specification and completed', async () => {
    const r = await create(translated(), { model: MODEL, ...CASES.basic });
    expect(r.status).toBe(200);
    expect(responseErrors(r.body)).toEqual([]);
    expect(r.body.output[0]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'echo: Greet me in three words.' }] });
  });

  it('streaming response: every event conforms, numbered from 0, created → in_progress → … → completed', async () => {
    const s = await stream(translated(), { model: MODEL, ...CASES.streaming });
    expect(s.status).toBe(200);
    expect(streamErrors(s)).toEqual([]);
    expect(responseErrors(s.final)).toEqual([]);
    const [up] = await env.fake.waitForRequests(1);
    expect(up!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('system prompt: a system message item reaches the backend as the first system message', async () => {
    const r = await create(translated(), { model: MODEL, ...CASES.systemPrompt });
    expect(responseErrors(r.body)).toEqual([]);
    const [up] = await env.fake.waitForRequests(1);
    expect(up!.body.messages).toEqual([
      { role: 'system', content: 'Answer like a pirate.' },
      { role: 'user', content: 'Greet me.' },
    ]);
  });

  it('tool calling: the tool reaches the backend; its call comes back as a function_call item; the echoed tool conforms', async () => {
    env.fake.enqueue('/v1/chat/completions', {
      json: { ...chatCompletion(''), choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [toolCall] } }] },
    });
    const r = await create(translated(), { model: MODEL, ...CASES.tools });
    expect(responseErrors(r.body)).toEqual([]);
    expect(r.body.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_w1', name: 'get_weather', arguments: '{"location":"Lisbon"}' })]);
    expect(r.body.tools).toEqual([{ ...WEATHER_TOOL, strict: null }]);
    const [up] = await env.fake.waitForRequests(1);
    expect(up!.body.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.parameters } }]);
  });

  it('tool calling, streamed: the call arguments arrive as conforming function_call_arguments events', async () => {
    env.fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(toolCallChunks()) } });
    const s = await stream(translated(), { model: MODEL, ...CASES.tools });
    expect(streamErrors(s)).toEqual([]);
    expect(responseErrors(s.final)).toEqual([]);
    const deltas = s.events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta as string);
    expect(deltas.join('')).toBe('{"location":"Lisbon"}');
    expect(s.events.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({ arguments: '{"location":"Lisbon"}' });
    expect(s.final!.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_w1', status: 'completed' })]);
  });

  it('image input: the image reaches the backend as an image part of the user message', async () => {
    const r = await create(translated(), { model: MODEL, ...CASES.image });
    expect(responseErrors(r.body)).toEqual([]);
    const [up] = await env.fake.waitForRequests(1);
    expect(up!.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url: IMAGE_URL } },
        ],
      },
    ]);
  });

  it('multi-turn by items sent back: the backend gets the whole conversation in order', async () => {
    const r = await create(translated(), { model: MODEL, ...CASES.multiTurn });
    expect(responseErrors(r.body)).toEqual([]);
    const [up] = await env.fake.waitForRequests(1);
    expect(up!.body.messages).toEqual([
      { role: 'user', content: 'I am Bea.' },
      { role: 'assistant', content: 'Hello Bea, how can I help?' },
      { role: 'user', content: 'Who am I?' },
    ]);
  });

  it('multi-turn by previous_response_id: the second turn carries the first; both objects conform', async () => {
    const first = await create(translated(), { model: MODEL, input: [CASES.multiTurn.input[0]] });
    expect(responseErrors(first.body)).toEqual([]);
    const second = await create(translated(), { model: MODEL, previous_response_id: first.body.id, input: [CASES.multiTurn.input[2]] });
    expect(responseErrors(second.body)).toEqual([]);
    expect(second.body.previous_response_id).toBe(first.body.id);
    const [, up] = await env.fake.waitForRequests(2);
    expect(up!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'I am Bea.' }] },
      { role: 'assistant', content: 'echo: I am Bea.' },
      { role: 'user', content: 'Who am I?' },
    ]);
  });
});

describe('Open Responses compliance: passed through to a provider with its own Responses API', () => {
  const native = () => target('openai');

  it.each([
    ['basic response', CASES.basic],
    ['system prompt', CASES.systemPrompt],
    ['image input', CASES.image],
    ['multi-turn', CASES.multiTurn],
  ])('%s: the request goes to /responses as sent; the answer conforms', async (_, request) => {
    const r = await create(native(), { model: MODEL, ...request });
    expect(responseErrors(r.body)).toEqual([]);
    const [up] = await env.fake.waitForRequests(1);
    expect(up!.path).toBe('/v1/responses');
    expect(up!.body).toEqual({ model: MODEL, ...request, stream: false });
  });

  it('streaming response: the events pass as OpenAI numbered them, conforming', async () => {
    const s = await stream(native(), { model: MODEL, ...CASES.streaming });
    expect(streamErrors(s)).toEqual([]);
    expect(responseErrors(s.final)).toEqual([]);
  });

  it('tool calling: the tool goes as sent; the function_call item comes back', async () => {
    const answer = { ...fakeResponseObject({ model: MODEL, tools: [WEATHER_TOOL] }, ''), output: [{ id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_w1', name: 'get_weather', arguments: '{"location":"Lisbon"}' }] };
    env.fake.enqueue('/v1/responses', { json: answer });
    const r = await create(native(), { model: MODEL, ...CASES.tools });
    expect(responseErrors(r.body)).toEqual([]);
    expect(r.body.output).toEqual(answer.output);
    const [up] = await env.fake.waitForRequests(1);
    expect(up!.body.tools).toEqual([WEATHER_TOOL]);
  });

  it('multi-turn by previous_response_id: the gateway sends the stored conversation; both objects conform', async () => {
    const first = await create(native(), { model: MODEL, input: [CASES.multiTurn.input[0]] });
    const second = await create(native(), { model: MODEL, previous_response_id: first.body.id, input: [CASES.multiTurn.input[2]] });
    expect(responseErrors(first.body)).toEqual([]);
    expect(responseErrors(second.body)).toEqual([]);
    const [, up] = await env.fake.waitForRequests(2);
    expect(up!.body.previous_response_id).toBeUndefined();
    expect(up!.body.input).toMatchObject([
      { role: 'user', content: [{ type: 'input_text', text: 'I am Bea.' }] },
      { role: 'assistant', content: [{ type: 'output_text', text: 'echo: I am Bea.' }] },
      { role: 'user', content: 'Who am I?' },
    ]);
  });
});

describe('Open Responses conformance beyond the compliance cases (translated)', () => {
  it('a stream the backend cuts ends with a conforming `error` event, numbered after the others', async () => {
    env.fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['a', 'b', 'c'])), cutAfter: 2 } });
    const s = await stream(translated(), { model: MODEL, ...CASES.streaming });
    expect(streamErrors(s, { endsWithError: true })).toEqual([]);
    expect(s.events.at(-1)).toMatchObject({ type: 'error', sequence_number: s.events.length - 1, error: { code: 'stream_interrupted' } });
  });

  it('a length stop: an `incomplete` object that conforms', async () => {
    env.fake.enqueue('/v1/chat/completions', { json: { ...chatCompletion('cut'), choices: [{ index: 0, finish_reason: 'length', message: { role: 'assistant', content: 'cut' } }] } });
    const r = await create(translated(), { model: MODEL, ...CASES.basic, max_output_tokens: 1 });
    expect(responseErrors(r.body, { status: 'incomplete' })).toEqual([]);
    expect(r.body.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('text settings without a format: the echoed text has the default format', async () => {
    const r = await create(translated(), { model: MODEL, ...CASES.basic, text: { verbosity: 'low' } });
    expect(responseErrors(r.body)).toEqual([]);
    expect(r.body.text).toEqual({ verbosity: 'low', format: { type: 'text' } });
  });

  it('the stored object (GET) and a background record conform too', async () => {
    const t = translated();
    const r = await create(t, { model: MODEL, ...CASES.tools });
    const get = (id: string) => fetch(`${t.url}/v1/responses/${id}`, { headers: { 'x-gateway-api-key': t.gatewayKey } }).then((x) => x.json() as Promise<Record<string, any>>);
    expect(responseErrors(await get(r.body.id))).toEqual([]);
    const bg = await create(t, { model: MODEL, ...CASES.basic, background: true });
    expect(violations(responseResource, bg.body)).toEqual([]);
    expect(['queued', 'in_progress']).toContain(bg.body.status);
    await env.fake.waitForRequests(2); // the background run's upstream call, before the next test's script
  });
});

describe('Open Responses conformance of the other ways a stream is made', () => {
  const reasoningChunk = (delta: object, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }] });

  it("a chat host's reasoning text: the reasoning item's events conform", async () => {
    env.fake.enqueue('/v1/chat/completions', {
      stream: { frames: sseFrames([reasoningChunk({ role: 'assistant', reasoning_content: 'Six ' }), reasoningChunk({ reasoning_content: 'sevens.' }), reasoningChunk({ content: '42' }), reasoningChunk({}, 'stop')]) },
    });
    const s = await stream(translated(), { model: MODEL, ...CASES.streaming });
    expect(streamErrors(s)).toEqual([]);
    expect(responseErrors(s.final)).toEqual([]);
    expect(s.final!.output.map((i: { type: string }) => i.type)).toEqual(['reasoning', 'message']);
  });

  it.each(['openai-compatible', 'openai'] as const)('a cached answer replayed as a stream conforms (%s)', async (provider) => {
    const config = JSON.stringify({ provider, custom_host: env.fake.baseUrl, api_key: 'sk-x', cache: { mode: 'simple', max_age: 60 } });
    const t = { ...target(provider), headers: { 'x-gateway-config': config } };
    const request = { model: MODEL, ...CASES.tools, input: `replayed ${provider}` };
    const first = await create(t, request);
    const s = await stream(t, request);
    expect(env.fake.requests).toHaveLength(1);
    expect(streamErrors(s)).toEqual([]);
    expect(responseErrors(s.final)).toEqual([]);
    expect(s.final!.output).toEqual(first.body.output);
  });
});
