import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { chatCompletion, sseFrames } from '../fakes/openai-server.js';
import { gatewayAndFake } from './harness.js';

/**
 * A chat host's reasoning text (`reasoning_content`, as DeepSeek sends it) becomes a `reasoning`
 * output item with a `reasoning_text` part: in the response object, and in a stream as
 * `response.reasoning_text.delta` events before the message, read by the official openai SDK.
 */
const env = gatewayAndFake();

function sdk(): OpenAI {
  return new OpenAI({
    apiKey: 'sk-compat',
    baseURL: `${env.gw.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': env.gw.key, 'x-gateway-provider': 'openai-compatible', 'x-gateway-custom-host': env.fake.baseUrl },
  });
}

const chunk = (delta: object, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'deepseek-reasoner', choices: [{ index: 0, delta, finish_reason: finish }] });

describe('reasoning_content → a reasoning item', () => {
  it('JSON: the reasoning item first, then the message; output_text is the answer alone; stored as answered', async () => {
    const answer = chatCompletion('42') as { choices: { message: object }[] };
    answer.choices[0]!.message = { ...answer.choices[0]!.message, reasoning_content: 'Six times seven.' };
    env.fake.enqueue('/v1/chat/completions', { json: answer });
    const r = await sdk().responses.create({ model: 'deepseek-reasoner', input: 'six times seven?' });
    expect(r.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect(r.output[0]).toMatchObject({ id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'Six times seven.' }] });
    expect(r.output_text).toBe('42');
    expect((await sdk().responses.retrieve(r.id)).output).toEqual(r.output);
  });

  it('a stream: reasoning_text deltas on their own item, then the text; the final response has both', async () => {
    env.fake.enqueue('/v1/chat/completions', {
      stream: { frames: sseFrames([chunk({ role: 'assistant', reasoning_content: 'Six ' }), chunk({ reasoning_content: 'times seven.' }), chunk({ content: '42' }), chunk({}, 'stop')]) },
    });
    const stream = sdk().responses.stream({ model: 'deepseek-reasoner', input: 'six times seven?' });
    const deltas: string[] = [];
    stream.on('response.reasoning_text.delta', (e) => deltas.push(e.delta));
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    const final = await stream.finalResponse();
    expect(deltas).toEqual(['Six ', 'times seven.']);
    expect(types.slice(2, 8)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
    ]);
    expect(final.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect(final.output[0]).toMatchObject({ type: 'reasoning', status: 'completed', content: [{ type: 'reasoning_text', text: 'Six times seven.' }] });
    expect(final.output_text).toBe('42');
  });

  it('a reasoning item sent back as input is left out of the chat request', async () => {
    const first = await sdk().responses.create({ model: 'deepseek-reasoner', input: 'hi' });
    await sdk().responses.create({ model: 'deepseek-reasoner', input: [{ type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'thought' }] }, { role: 'user', content: 'again' }], previous_response_id: first.id });
    const [, up] = await env.fake.waitForRequests(2);
    expect(JSON.stringify(up!.body.messages)).not.toContain('thought');
  });
});
