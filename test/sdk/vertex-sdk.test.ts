/**
 * vertex-ai end to end: the official openai SDK → the gateway → the fake Vertex AI (and its token
 * endpoint), over real sockets. Every way in (service account in an inline config, a virtual key, a
 * plain access token in Authorization with the x-gateway-cloud-c-* headers), plain and stream, tool
 * calls assembled by chat.completions.stream(), RESOURCE_EXHAUSTED, a cut stream, a semantic cache in
 * front of Vertex, the model list, and one token exchange shared by concurrent requests, refreshed by
 * the gateway's injected clock.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { FakeClock } from '../helpers/clock.js';
import { post } from '../helpers/http.js';
import { parseSse } from '../helpers/sse.js';
import { FakeVertex, geminiResponse, geminiSse, googleError } from '../fakes/vertex-server.js';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { metricSum, scrape } from '../cache-http/_http.js';

const clock = new FakeClock();
let fake: FakeVertex;
let gw: TestGateway;
let seq = 0;

/** A service account with a token_uri of its own (so each test has its own cache entry). */
const freshAccount = (): Record<string, unknown> => fake.serviceAccount({ token_uri: `${fake.baseUrl}/token?account=${++seq}` });

const saConfig = (over: Record<string, unknown> = {}) => ({
  provider: 'vertex-ai',
  custom_host: fake.baseUrl,
  cloud_c_region: 'europe-west4',
  cloud_c_service_account_json: fake.serviceAccount(),
  ...over,
});

function sdk(headers: Record<string, string>, apiKey = 'unused'): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': gw.key, ...headers } });
}
const viaConfig = (over: Record<string, unknown> = {}): OpenAI => sdk({ 'x-gateway-config': JSON.stringify(saConfig(over)) });

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const usage = { promptTokenCount: 7, candidatesTokenCount: 3, totalTokenCount: 10 };

beforeAll(async () => {
  fake = await FakeVertex.start(clock.now);
  gw = await startGateway({
    now: clock.now,
    bootstrap: {
      api_keys: [],
      provider_base_urls: {},
      virtual_keys: {
        vertex: { provider: 'vertex-ai', custom_host: fake.baseUrl, cloud_c_region: 'us-central1', cloud_c_project_id: 'vk-project', cloud_c_service_account_json: fake.serviceAccount() },
      },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());

describe('vertex-ai through the gateway with the openai SDK', () => {
  it('chat.completions.create with a service account in an inline config', async () => {
    const { data, response } = await viaConfig()
      .chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'ping' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('echo: ping');
    expect(data.choices[0]!.finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(response.headers.get('x-gateway-provider')).toBe('vertex-ai');
    const [call] = fake.calls;
    expect(call!.path).toBe('/v1/projects/sa-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(call!.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
    expect(call!.body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(gw.logText()).not.toContain('PRIVATE KEY');
  });

  it('stream with for await, include_usage honoured, [DONE] last', async () => {
    const stream = await viaConfig().chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'hello wörld' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let total: number | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      total = chunk.usage?.total_tokens ?? total;
    }
    expect([text, finish, total]).toEqual(['echo: hello wörld', 'stop', 5]);
    expect(fake.calls[0]!.url).toContain(':streamGenerateContent?alt=sse');
  });

  it('tool calls: create (non-stream) and chat.completions.stream() assembling them', async () => {
    const client = viaConfig();
    fake.enqueue({ json: geminiResponse([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }], 'STOP', usage) });
    const plain = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'weather?' }], tools: [weatherTool], tool_choice: 'required' });
    expect(plain.choices[0]!.finish_reason).toBe('tool_calls');
    const call = plain.choices[0]!.message.tool_calls![0]! as { id: string; function: { name: string; arguments: string } };
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(fake.calls[0]!.body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });

    fake.enqueue({
      frames: geminiSse([
        geminiResponse([{ text: 'Checking. ' }]),
        geminiResponse([{ functionCall: { name: 'get_weather', args: { city: 'Rome' } } }, { functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }], 'STOP', usage),
      ]),
    });
    const runner = client.chat.completions.stream({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'two cities' }], tools: [weatherTool] });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.content).toBe('Checking. ');
    expect(final.choices[0]!.message.tool_calls!.map((c) => (c as { function: { arguments: string } }).function.arguments)).toEqual(['{"city":"Rome"}', '{"city":"Oslo"}']);

    // The next turn: the tool results go back as functionResponse parts named after the calls.
    await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'weather?' }, plain.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18°C' }],
      tools: [weatherTool],
    });
    expect(fake.calls.at(-1)!.body.contents.at(-1)).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: '18°C' } } }] });
  });

  it('a plain access token in Authorization with x-gateway-provider and the cloud-c headers', async () => {
    fake.staticTokens.add('ya29.operator-token');
    const client = sdk(
      { 'x-gateway-provider': 'vertex-ai', 'x-gateway-cloud-c-project-id': 'hdr-project', 'x-gateway-cloud-c-region': 'us-east5', 'x-gateway-custom-host': fake.baseUrl },
      'ya29.operator-token',
    );
    const r = await client.chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBe('echo: hi');
    expect(fake.calls[0]!.path).toBe('/v1/projects/hdr-project/locations/us-east5/publishers/google/models/gemini-2.5-pro:generateContent');
    expect(fake.calls[0]!.headers.authorization).toBe('Bearer ya29.operator-token');
    expect(fake.requests.some((q) => q.path === '/token')).toBe(false);
  });

  it('a virtual key from the bootstrap file', async () => {
    const r = await sdk({ 'x-gateway-virtual-key': 'vertex' }).chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'vk' }] });
    expect(r.choices[0]!.message.content).toBe('echo: vk');
    expect(fake.calls[0]!.path).toContain('/projects/vk-project/locations/us-central1/');
  });

  it('GET /v1/models lists the publisher models', async () => {
    const page = await viaConfig().models.list();
    expect(page.data.map((m) => m.id)).toEqual(['gemini-2.5-flash', 'gemini-2.5-pro']);
  });

  it('concurrent requests share one token exchange; the gateway clock past the refresh point exchanges again', async () => {
    const client = viaConfig({ cloud_c_service_account_json: freshAccount() });
    const before = fake.exchanges;
    const answers = await Promise.all([1, 2, 3, 4, 5].map((i) => client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: `n${i}` }] })));
    expect(answers.map((a) => a.choices[0]!.message.content)).toEqual(['echo: n1', 'echo: n2', 'echo: n3', 'echo: n4', 'echo: n5']);
    expect(fake.exchanges - before).toBe(1);
    clock.advance(56 * 60_000);
    await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'later' }] });
    expect(fake.exchanges - before).toBe(2);
  });

  it('429 RESOURCE_EXHAUSTED reaches the SDK as a 429 with Google\'s message', async () => {
    fake.enqueue(googleError(429, 'RESOURCE_EXHAUSTED', 'Resource exhausted. Please try again later.'));
    const err = await viaConfig()
      .chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).message).toContain('Resource exhausted. Please try again later.');
  });

  it('a token endpoint that refuses the account is a 401 naming its answer', async () => {
    fake.enqueueToken({ status: 400, json: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } });
    const err = await viaConfig({ cloud_c_service_account_json: freshAccount() })
      .chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as Error).message).toContain('invalid_grant: Invalid JWT Signature.');
    expect(fake.calls).toHaveLength(0);
  });

  it('a stream cut mid-way ends with an SSE error event, never [DONE]', async () => {
    fake.enqueue({ frames: geminiSse([geminiResponse([{ text: 'partial ' }]), geminiResponse([{ text: 'more' }]), geminiResponse([], 'STOP', usage)]), cutAfter: 2 });
    const a = await post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': JSON.stringify(saConfig()) }), {
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const frames = parseSse(a.text);
    expect(frames.some((f) => f.data === '[DONE]')).toBe(false);
    expect(frames.at(-1)!.event).toBe('error');
    expect(frames.filter((f) => f.event === undefined).map((f) => JSON.parse(f.data).choices[0].delta.content).join('')).toBe('partial more');
  });

  it('a fallback from a failing OpenAI target reaches Vertex; /metrics labels carry the provider', async () => {
    const openai = await FakeOpenAI.start();
    try {
      openai.enqueue('/v1/chat/completions', openAIError(503, 'overloaded'));
      const cfg = { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'sk-x', custom_host: openai.baseUrl }, saConfig()] };
      const { data, response } = await sdk({ 'x-gateway-config': JSON.stringify(cfg) })
        .chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'fall' }] })
        .withResponse();
      expect(data.choices[0]!.message.content).toBe('echo: fall');
      expect(response.headers.get('x-gateway-provider')).toBe('vertex-ai');
      expect(response.headers.get('x-gateway-target')).toBe('config.targets[1]');
      const samples = await scrape(gw.url);
      expect(metricSum(samples, 'sluice_target_requests_total', { provider: 'vertex-ai', target: 'config.targets[1]' })).toBeGreaterThan(0);
      expect(metricSum(samples, 'gen_ai_client_token_usage_total', { gen_ai_system: 'vertex-ai' })).toBeGreaterThan(0);
    } finally {
      await openai.close();
    }
  });

  it('a semantic cache in front of Vertex answers a similar prompt without calling it', async () => {
    const cfg = saConfig({ cache: { mode: 'semantic', similarity_threshold: 0.8, max_age: 60 } });
    const headers = gw.headers({ 'x-gateway-config': JSON.stringify(cfg), 'x-gateway-cache-namespace': 'vertex-semantic' });
    const prompt = 'Please explain how a circuit breaker protects an application from a failing upstream dependency';
    const first = await post(`${gw.url}/v1/chat/completions`, headers, { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: prompt }] });
    expect([first.status, first.cacheStatus]).toEqual([200, 'MISS']);
    const second = await post(`${gw.url}/v1/chat/completions`, headers, { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: `${prompt}?` }] });
    expect([second.status, second.cacheStatus]).toEqual([200, 'SEMANTIC_HIT']);
    expect(second.json.choices[0].message.content).toBe(`echo: ${prompt}`);
    expect(fake.calls).toHaveLength(1);
  });
});
