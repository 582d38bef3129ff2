/**
 * The cache serves /v1/responses as it serves chat: a JSON answer replayed as the Responses API's
 * stream events, a stream's events answered as the response object, both read by the openai SDK.
 */
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { gatewayAndFake } from './harness.js';

const env = gatewayAndFake();

const client = (provider: string) =>
  new OpenAI({
    apiKey: 'unused',
    baseURL: `${env.gw.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      'x-gateway-api-key': env.gw.key,
      'x-gateway-config': JSON.stringify({ provider, custom_host: env.fake.baseUrl, api_key: 'sk-x', cache: { mode: 'simple', max_age: 60 } }),
    },
  });


describe.each(['openai', 'openai-compatible'])('the cache on /v1/responses (%s)', (provider) => {
  it('a JSON answer, then the same request streamed: a hit replayed as the Responses events', async () => {
    const input = `json first ${provider}`;
    const first = await client(provider).responses.create({ model: 'gpt-4o-mini', input });
    const stream = client(provider).responses.stream({ model: 'gpt-4o-mini', input });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    const final = await stream.finalResponse();
    expect(env.fake.requests).toHaveLength(1);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(final.output_text).toBe(first.output_text);
  });

  it('a stream, then the same request as JSON: a hit answered as the response object', async () => {
    const input = `stream first ${provider}`;
    const stream = client(provider).responses.stream({ model: 'gpt-4o-mini', input });
    for await (const _ of stream);
    const streamed = await stream.finalResponse();
    const { data, response } = await client(provider).responses.create({ model: 'gpt-4o-mini', input }).withResponse();
    expect(env.fake.requests).toHaveLength(1);
    expect(response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(data.object).toBe('response');
    expect(data.output_text).toBe(streamed.output_text);
  });
});
