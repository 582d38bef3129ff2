import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { FakeVertex, geminiResponse, geminiSse } from '../fakes/vertex-server.js';
import { configClient, useFakeGateway } from './_door.js';

/** The Messages door in front of Gemini on Vertex AI (cloud C): Anthropic's shape in, Gemini's generateContent out, and back. */
const TOKEN = 'ya29.static-bridge-token';
const rig = useFakeGateway(async () => {
  const f = await FakeVertex.start();
  f.staticTokens.add(TOKEN);
  return f;
});
const target = () => ({ provider: 'vertex-ai', api_key: TOKEN, custom_host: rig.fake.baseUrl, cloud_c_region: 'us-central1', cloud_c_project_id: 'gemini-project' });
const client = (): Anthropic => configClient(rig.gw, target());
const weather = { name: 'weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const GEMINI = '/v1/projects/gemini-project/locations/us-central1/publishers/google/models/gemini-2.5-flash';

describe('messages.create to Gemini on Vertex AI', () => {
  it('text: the system and the turn become systemInstruction and contents; the answer is a message object', async () => {
    const msg = await client().messages.create({ model: 'gemini-2.5-flash', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'ping' }], stop_sequences: ['END'], ...{ top_k: 5 }, metadata: { user_id: 'u-1' } });
    const up = rig.fake.calls.at(-1)!;
    expect(up.path).toBe(`${GEMINI}:generateContent`);
    expect(up.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'ping' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 64, stopSequences: ['END'] },
    });
    expect(msg).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'echo: ping' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 0 } });
    expect(msg.id).toMatch(/^msg_/);
  });

  it('tool use: a tool-use turn and its result reach Gemini as functionCall and functionResponse; a functionCall comes back as tool_use', async () => {
    rig.fake.enqueue({ json: geminiResponse([{ functionCall: { name: 'weather', args: { city: 'Oslo' } } }], 'STOP', { promptTokenCount: 50, candidatesTokenCount: 6, totalTokenCount: 56, cachedContentTokenCount: 32 }) });
    const msg = await client().messages.create({
      model: 'gemini-2.5-flash',
      max_tokens: 64,
      tools: [weather],
      tool_choice: { type: 'auto' },
      messages: [
        { role: 'user', content: 'Paris, then Oslo?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
      ],
    });
    const up = rig.fake.calls.at(-1)!;
    expect(up.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Paris, then Oslo?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { content: 'sunny' } } }] },
    ]);
    expect(up.body.tools).toEqual([{ functionDeclarations: [{ name: 'weather', description: 'Weather of a city', parametersJsonSchema: weather.input_schema }] }]);
    expect(up.body.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(msg.content).toEqual([{ type: 'tool_use', id: expect.any(String), name: 'weather', input: { city: 'Oslo' } }]);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.usage).toMatchObject({ input_tokens: 18, cache_read_input_tokens: 32, output_tokens: 6 });
  });
});

describe('messages.stream to Gemini on Vertex AI', () => {
  it('text: streamGenerateContent, Anthropic’s events, the usage in message_delta', async () => {
    const stream = client().messages.stream({ model: 'gemini-2.5-flash', max_tokens: 64, messages: [{ role: 'user', content: 'ping' }] });
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const final = await stream.finalMessage();
    expect(rig.fake.calls.at(-1)!.url).toBe(`${GEMINI}:streamGenerateContent?alt=sse`);
    expect(final.content).toEqual([{ type: 'text', text: 'echo: ping' }]);
    expect(final).toMatchObject({ stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 2 } });
    expect(types[0]).toBe('message_start');
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
  });

  it('tool use: text then a function call, as a text block and a tool_use block with its input', async () => {
    rig.fake.enqueue({
      frames: geminiSse([
        geminiResponse([{ text: 'Let me look.' }]),
        geminiResponse([{ functionCall: { name: 'weather', args: { city: 'Rome' } } }], 'STOP', { promptTokenCount: 20, candidatesTokenCount: 8, totalTokenCount: 28 }),
      ]),
    });
    const final = await client().messages.stream({ model: 'gemini-2.5-flash', max_tokens: 64, tools: [weather], messages: [{ role: 'user', content: 'Rome?' }] }).finalMessage();
    expect(final.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: expect.any(String), name: 'weather', input: { city: 'Rome' } },
    ]);
    expect(final).toMatchObject({ stop_reason: 'tool_use', usage: { input_tokens: 20, output_tokens: 8 } });
  });
});

describe('output guardrails on a Messages stream translated from Gemini', () => {
  it('a deny is a 446 in Anthropic’s envelope; a pass answers the translated events', async () => {
    const guarded = (maxWords: number) => configClient(rig.gw, { ...target(), output_guardrails: [{ id: 'short', 'default.wordCount': { maxWords }, deny: true }] });
    const ask = { model: 'gemini-2.5-flash', max_tokens: 64, messages: [{ role: 'user' as const, content: 'one two three four five' }] };
    const err = await guarded(3).messages.stream(ask).finalMessage().then(() => undefined, (e: unknown) => e as InstanceType<typeof Anthropic.APIError>);
    expect(err?.status).toBe(446);
    expect(err?.error).toMatchObject({ type: 'error', error: { code: 'hooks_failed' } });
    const final = await guarded(50).messages.stream(ask).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'echo: one two three four five' }]);
  });
});
