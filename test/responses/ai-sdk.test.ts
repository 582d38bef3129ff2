import { describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { chatChunks, chatCompletion, sseFrames } from '../fakes/openai-server.js';
import { gatewayAndFake } from './harness.js';

/**
 * The Vercel AI SDK's default `openai('model')` (the Responses API) through the gateway to a host
 * that has only chat completions: a tool call, its result sent back, and the final text.
 */
const env = gatewayAndFake();

const provider = () =>
  createOpenAI({
    apiKey: 'sk-host',
    baseURL: `${env.gw.url}/v1`,
    headers: { 'x-gateway-api-key': env.gw.key, 'x-gateway-provider': 'openai-compatible', 'x-gateway-custom-host': env.fake.baseUrl },
  });

const weather = tool({
  description: 'The weather of a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

const callChunk = (delta: object, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] });

describe("the Vercel AI SDK's openai('model') through the Responses front door", () => {
  it('generateText with a tool: the call, its output sent back as a tool message, then the text', async () => {
    env.fake.enqueue(
      '/v1/chat/completions',
      { json: { ...chatCompletion(''), choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] } }] } },
      { json: chatCompletion('It is sunny in Oslo.') },
    );
    const r = await generateText({ model: provider()('gpt-4o-mini'), prompt: 'Weather in Oslo?', tools: { weather }, stopWhen: stepCountIs(3) });
    expect(r.text).toBe('It is sunny in Oslo.');
    expect(r.steps[0]!.toolCalls.map((c) => [c.toolName, c.input])).toEqual([['weather', { city: 'Oslo' }]]);
    const [first, second] = await env.fake.waitForRequests(2);
    expect(first!.path).toBe('/v1/chat/completions');
    expect(first!.body.tools).toEqual([{ type: 'function', function: expect.objectContaining({ name: 'weather', description: 'The weather of a city' }) }]);
    expect(second!.body.messages.slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: expect.stringContaining('sunny in Oslo') },
    ]);
    expect(r.totalUsage.inputTokens).toBeGreaterThan(0);
  });

  it('streamText with a tool: the streamed call and the streamed text', async () => {
    env.fake.enqueue(
      '/v1/chat/completions',
      {
        stream: {
          frames: sseFrames([
            callChunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_7', type: 'function', function: { name: 'weather', arguments: '' } }] }),
            callChunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Rome"}' } }] }),
            callChunk({}, 'tool_calls'),
          ]),
        },
      },
      { stream: { frames: sseFrames(chatChunks(['Sunny ', 'in Rome.'], { includeUsage: true })) } },
    );
    const r = streamText({ model: provider()('gpt-4o-mini'), prompt: 'Weather in Rome?', tools: { weather }, stopWhen: stepCountIs(3) });
    let text = '';
    for await (const piece of r.textStream) text += piece;
    expect(text).toBe('Sunny in Rome.');
    const steps = await r.steps;
    expect(steps[0]!.toolResults.map((t) => t.output)).toEqual(['sunny in Rome']);
    expect((await r.totalUsage).outputTokens).toBeGreaterThan(0);
    const [, second] = await env.fake.waitForRequests(2);
    expect(second!.body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_7', content: expect.stringContaining('sunny in Rome') });
  });
});
