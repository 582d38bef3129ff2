/** strict_vendor_compliance end to end: the openai SDK through the gateway to a host that adds extras. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { FakeOpenAI, sseFrames } from '../fakes/openai-server.js';

const KEY = 'sk-provider-strict';
let fake: FakeOpenAI;
let gw: TestGateway;

const EXTRAS_BODY = {
  id: 'chatcmpl-x',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }],
  choices: [{ index: 0, finish_reason: 'stop', logprobs: null, content_filter_results: { hate: { filtered: false } }, message: { role: 'assistant', content: 'ok', refusal: null, reasoning_content: 'r' } }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 2, cache_write_tokens: 1 } },
};
const CHUNKS = [
  { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], prompt_filter_results: [{ prompt_index: 0 }] },
  { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'o' }, finish_reason: null, content_filter_results: {} }] },
  { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'k' }, finish_reason: 'stop' }], x_groq: { id: 'q' } },
];

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

function client(config: Record<string, unknown>): OpenAI {
  const cfg = { provider: 'openai', api_key: KEY, custom_host: fake.baseUrl, ...config };
  return new OpenAI({ apiKey: 'unused', baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': gw.key, 'x-gateway-config': JSON.stringify(cfg) } });
}

async function rawChunks(c: OpenAI): Promise<Record<string, unknown>[]> {
  const stream = await c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true });
  const out: Record<string, unknown>[] = [];
  for await (const ch of stream) out.push(ch as unknown as Record<string, unknown>);
  return out;
}

describe('strict_vendor_compliance', () => {
  it('off (default): the provider extras are kept', async () => {
    fake.enqueue('/v1/chat/completions', { json: EXTRAS_BODY });
    const r = (await client({}).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })) as unknown as typeof EXTRAS_BODY;
    expect(r.prompt_filter_results).toBeDefined();
    expect(r.choices[0]!.message.reasoning_content).toBe('r');
    expect(r.usage.prompt_tokens_details.cache_write_tokens).toBe(1);
  });

  it('on: only OpenAI fields in the JSON body', async () => {
    fake.enqueue('/v1/chat/completions', { json: EXTRAS_BODY });
    const r = await client({ strict_vendor_compliance: true }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    const { _request_id: _ignored, ...body } = r as typeof r & { _request_id?: unknown };
    expect(body).toEqual({
      id: 'chatcmpl-x',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'ok', refusal: null } }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 2 } },
    });
  });

  it('on, inherited from a fallback root: every stream chunk stripped; off: extras kept', async () => {
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(CHUNKS) } });
    const strict = await rawChunks(
      client({ strict_vendor_compliance: true, strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: KEY, custom_host: fake.baseUrl }], provider: undefined, api_key: undefined, custom_host: undefined }),
    );
    expect(strict.map((c) => c.choices)).toEqual([[], [{ index: 0, delta: { role: 'assistant', content: 'o' }, finish_reason: null }], [{ index: 0, delta: { content: 'k' }, finish_reason: 'stop' }]]);
    for (const c of strict) {
      expect(c).not.toHaveProperty('prompt_filter_results');
      expect(c).not.toHaveProperty('x_groq');
    }
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(CHUNKS) } });
    const loose = await rawChunks(client({}));
    expect(loose[0]).toHaveProperty('prompt_filter_results');
    expect(loose[2]).toHaveProperty('x_groq');
  });
});
