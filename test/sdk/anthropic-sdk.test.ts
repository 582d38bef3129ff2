import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';
import { parseSse } from '../helpers/sse.js';
import { anthropicError, FAKE_ANTHROPIC_MODELS, FakeAnthropic, messageStream, sseEvent } from '../fakes/anthropic-server.js';

const KEY = 'sk-ant-e2e-secret';

let fake: FakeAnthropic;
let gw: TestGateway;
let client: OpenAI;

/** The official SDK pointed at the gateway; by default provider + Authorization, reaching the fake through custom_host. */
function sdk(headers: Record<string, string> = {}, apiKey = KEY, byProvider = true): OpenAI {
  const provider = byProvider ? { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': fake.baseUrl } : {};
  return new OpenAI({
    apiKey,
    baseURL: `${gw.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': gw.key, ...provider, ...headers },
  });
}

const failure = <T>(p: Promise<T>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);
const hi = { model: 'claude-sonnet-4-5', messages: [{ role: 'user' as const, content: 'hi' }] };

beforeAll(async () => {
  fake = await FakeAnthropic.start(KEY);
  gw = await startGateway({
    bootstrapYaml: `virtual_keys:\n  claude:\n    provider: anthropic\n    api_key: ${KEY}\n    custom_host: ${fake.baseUrl}\n`,
  });
  client = sdk();
});

afterEach(() => fake.reset());

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe('the openai SDK through the gateway to Anthropic', () => {
  it('chat.completions.create (non-stream): Authorization becomes x-api-key, system goes top-level', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'claude-sonnet-4-5', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'ping' }] })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]!.message.content).toBe('echo: ping');
    expect(data.choices[0]!.finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
    expect(response.headers.get('x-gateway-provider')).toBe('anthropic');
    const [up] = await fake.waitForRequests(1);
    expect(up!.path).toBe('/v1/messages');
    expect(up!.headers['x-api-key']).toBe(KEY);
    expect(up!.headers['anthropic-version']).toBe('2023-06-01');
    expect(up!.headers.authorization).toBeUndefined();
    expect(up!.body).toMatchObject({ system: [{ type: 'text', text: 'Be brief.' }], max_tokens: 4096 });
  });

  it('chat.completions.create (stream) with for await, then with include_usage', async () => {
    const stream = await client.chat.completions.create({ ...hi, stream: true });
    let content = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.usage ?? undefined).toBeUndefined();
      content += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(content).toBe('echo: hi');
    expect(finish).toBe('stop');

    const withUsage = await client.chat.completions.create({ ...hi, stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of withUsage) if (chunk.usage) usage = chunk.usage;
    expect(usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 0 } });
  });

  it('chat.completions.stream() assembles a streamed tool call', async () => {
    fake.enqueue('/v1/messages', {
      frames: messageStream(
        [{ text: ['Let me look.'] }, { tool: { id: 'toolu_W', name: 'get_weather', json: ['', '{"city":', ' "Zürich"}'] } }],
        { stopReason: 'tool_use' },
      ),
    });
    const runner = client.chat.completions.stream({
      ...hi,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      tool_choice: 'required',
    });
    const final = await runner.finalChatCompletion();
    const msg = final.choices[0]!.message;
    expect(msg.content).toBe('Let me look.');
    expect(msg.tool_calls).toEqual([{ id: 'toolu_W', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Zürich"}' } }]);
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    const [up] = await fake.waitForRequests(1);
    expect(up!.body.tool_choice).toEqual({ type: 'any' });
    expect(up!.body.tools[0].input_schema.properties.city.type).toBe('string');
  });

  it('a tool round trip: tool_calls and tool messages reach Anthropic as tool_use and one user turn of tool_results', async () => {
    const res = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'user', content: 'Paris and Oslo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'w', arguments: '{"c":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'w', arguments: '{"c":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18' },
        { role: 'tool', tool_call_id: 'toolu_2', content: '9' },
      ],
      tools: [{ type: 'function', function: { name: 'w', parameters: { type: 'object' } } }],
    });
    expect(res.choices[0]!.message.content).toBe('echo: Paris and Oslo?');
    const [up] = await fake.waitForRequests(1);
    expect(up!.body.messages).toHaveLength(3);
    expect(up!.body.messages[2].content.map((b: any) => b.tool_use_id)).toEqual(['toolu_1', 'toolu_2']);
  });

  it('models.list lists Anthropic models in the OpenAI shape', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(FAKE_ANTHROPIC_MODELS.map((m) => m.id));
    const [up] = await fake.waitForRequests(1);
    expect(up!.method).toBe('GET');
    expect(up!.url).toBe('/v1/models?limit=1000');
  });

  it('completions and embeddings are a 400 naming the provider and the endpoint; nothing reaches Anthropic', async () => {
    const c = (await failure(client.completions.create({ model: 'claude-sonnet-4-5', prompt: 'x' }))) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(c).toBeInstanceOf(OpenAI.BadRequestError);
    expect(c.code).toBe('unsupported_endpoint');
    expect(c.message).toContain('anthropic does not serve /v1/completions');
    const e = (await failure(client.embeddings.create({ model: 'claude-sonnet-4-5', input: 'x' }))) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.message).toContain('anthropic does not serve /v1/embeddings');
    expect(fake.requests).toHaveLength(0);
  });

  it('a field Anthropic cannot honour is a 400 naming it, before any call', async () => {
    const n = (await failure(client.chat.completions.create({ ...hi, n: 2 }))) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(n).toBeInstanceOf(OpenAI.BadRequestError);
    expect(n.param).toBe('n');
    expect(fake.requests).toHaveLength(0);
  });

  it('a temperature above Anthropic\'s 1 is clamped to 1 and said in x-gateway-params-mapped', async () => {
    const { data, response } = await client.chat.completions.create({ ...hi, temperature: 1.5 }).withResponse();
    expect(data.choices[0]!.message.content).toBe('echo: hi');
    expect(response.headers.get('x-gateway-params-mapped')).toBe('temperature=1.5->1');
    expect((await fake.waitForRequests(1))[0]!.body.temperature).toBe(1);
  });
});

describe('every way in', () => {
  it('a virtual key, an inline config, and a wrong key (Anthropic’s own 401)', async () => {
    const vk = sdk({ 'x-gateway-virtual-key': 'claude' }, 'unused', false);
    expect((await vk.chat.completions.create(hi)).choices[0]!.message.content).toBe('echo: hi');
    const cfg = JSON.stringify({ provider: 'anthropic', api_key: KEY, custom_host: fake.baseUrl });
    const inline = sdk({ 'x-gateway-config': cfg }, 'unused', false);
    expect((await inline.chat.completions.create(hi)).choices[0]!.message.content).toBe('echo: hi');
    const ups = await fake.waitForRequests(2);
    expect(ups.map((u) => u.headers['x-api-key'])).toEqual([KEY, KEY]);

    const wrong = (await failure(sdk({}, 'sk-ant-wrong').chat.completions.create(hi))) as InstanceType<typeof OpenAI.AuthenticationError>;
    expect(wrong).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(wrong.message).toContain('invalid x-api-key');
  });
});

describe('Anthropic errors through the gateway', () => {
  it('429 rate_limit_error: RateLimitError with the provider message and Retry-After', async () => {
    fake.enqueue('/v1/messages', anthropicError(429, 'rate_limit_error', 'Number of requests has exceeded your rate limit', { 'retry-after': '3' }));
    const e = (await failure(client.chat.completions.create(hi))) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.status).toBe(429);
    expect(e.message).toContain('Number of requests has exceeded your rate limit');
    expect(e.headers?.get('retry-after')).toBe('3');
  });

  it('529 overloaded_error: 503 with the provider message', async () => {
    fake.enqueue('/v1/messages', anthropicError(529, 'overloaded_error', 'Overloaded'));
    const e = (await failure(client.chat.completions.create(hi))) as InstanceType<typeof OpenAI.InternalServerError>;
    expect(e).toBeInstanceOf(OpenAI.InternalServerError);
    expect(e.status).toBe(503);
    expect(e.message).toContain('Overloaded');
    expect(e.code).toBe('overloaded_error');
  });

  it('529 is retried like any 503 by the default retry codes, honouring Retry-After', async () => {
    fake.enqueue('/v1/messages', anthropicError(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '1' }));
    const cfg = JSON.stringify({ provider: 'anthropic', api_key: KEY, custom_host: fake.baseUrl, retry: { attempts: 1, use_retry_after_headers: true } });
    const { data, response } = await sdk({ 'x-gateway-config': cfg }, 'unused', false).chat.completions.create(hi).withResponse();
    expect(data.choices[0]!.message.content).toBe('echo: hi');
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(fake.requests).toHaveLength(2);
  });

  it('an error event mid-stream ends the client stream with an error event, never [DONE]', async () => {
    const frames = messageStream([{ text: ['partial ', 'answer'] }]).slice(0, 5);
    frames.push(sseEvent('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }));
    fake.enqueue('/v1/messages', { frames });
    fake.enqueue('/v1/messages', { frames });

    const stream = await client.chat.completions.create({ ...hi, stream: true });
    let content = '';
    const err = await (async () => {
      for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
    })().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toContain('Overloaded');
    expect(content).toBe('partial answer');

    const raw = await post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-virtual-key': 'claude' }), { ...hi, stream: true });
    const out = parseSse(raw.text);
    expect(out.at(-1)!.event).toBe('error');
    expect(JSON.parse(out.at(-1)!.data).error.message).toBe('Overloaded');
    expect(out.some((f) => f.data === '[DONE]')).toBe(false);
  });

  it('a stream cut before message_stop ends with an error event, never [DONE]', async () => {
    fake.enqueue('/v1/messages', { frames: messageStream([{ text: ['a', 'b'] }]), cutAfter: 4 });
    const raw = await post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-virtual-key': 'claude' }), { ...hi, stream: true });
    const out = parseSse(raw.text);
    expect(out.at(-1)!.event).toBe('error');
    expect(out.some((f) => f.data === '[DONE]')).toBe(false);
  });
});
