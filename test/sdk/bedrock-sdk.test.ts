import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { FAKE_FOUNDATION_MODELS, FakeBedrock, SIGNATURE_MISMATCH, textEvents, toolEvents } from '../fakes/bedrock-server.js';

type ApiError = InstanceType<typeof OpenAI.APIError>;

const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const SESSION = 'FwoGZXIvYXdzEfakeSessionToken0123456789';

let fake: FakeBedrock;
let gw: TestGateway;

/** The key pair as x-gateway-cloud-b-* headers (the SDK's own Authorization is then a dummy). */
function cloudHeaders(over: Record<string, string> = {}): Record<string, string> {
  return {
    'x-gateway-provider': 'bedrock',
    'x-gateway-custom-host': fake.url,
    'x-gateway-cloud-b-access-key-id': fake.credentials.accessKeyId,
    'x-gateway-cloud-b-secret-access-key': fake.credentials.secretAccessKey,
    'x-gateway-cloud-b-session-token': SESSION,
    'x-gateway-cloud-b-region': fake.region,
    ...over,
  };
}

function sdk(headers: Record<string, string>, apiKey = 'unused-by-sigv4'): OpenAI {
  return new OpenAI({
    apiKey,
    baseURL: `${gw.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': gw.key, ...headers },
  });
}

beforeAll(async () => {
  fake = await FakeBedrock.start({
    credentials: { accessKeyId: 'AKIAFAKEFAKEFAKE0001', secretAccessKey: 'fake/secret+key/0123456789abcdefABCDEF', sessionToken: SESSION },
  });
  gw = await startGateway({
    bootstrap: {
      api_keys: [],
      provider_base_urls: {},
      virtual_keys: {
        'bedrock-prod': {
          provider: 'bedrock',
          custom_host: fake.url,
          cloud_b_access_key_id: fake.credentials.accessKeyId,
          cloud_b_secret_access_key: fake.credentials.secretAccessKey,
          cloud_b_session_token: SESSION,
          cloud_b_region: fake.region,
        },
      },
    } as never,
  });
});

afterEach(() => fake.reset());

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const WEATHER_TOOL: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe('the official openai SDK through the gateway to Bedrock Converse', () => {
  it('chat.completions.create (non-stream), SigV4 from x-gateway-cloud-b-* headers with a session token', async () => {
    const client = sdk(cloudHeaders());
    const { data, response } = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'grüß dich' }], max_tokens: 50, temperature: 0.2 })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe(MODEL);
    expect(data.choices[0]!.message.content).toBe('echo: grüß dich');
    expect(data.choices[0]!.finish_reason).toBe('stop');
    expect(data.usage).toEqual({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
    expect(response.headers.get('x-gateway-provider')).toBe('bedrock');
    const [up] = await fake.waitForRequests(1);
    expect(up!.auth).toBe('sigv4');
    expect(up!.operation).toBe('converse');
    expect(up!.rawPath).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    expect(up!.modelId).toBe(MODEL);
    expect(up!.headers['x-amz-security-token']).toBe(SESSION);
    expect(up!.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'grüß dich' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 50, temperature: 0.2 },
    });
    expect(gw.logText()).not.toContain(fake.credentials.secretAccessKey);
    expect(gw.logText()).not.toContain(SESSION);
  });

  it('chat.completions.create (stream): frames split and coalesced, UTF-8, finish and no usage chunk unless asked', async () => {
    fake.enqueue({ kind: 'stream', events: textEvents(['Hel', 'lo wö', 'rld ✓', '!']) });
    const stream = await sdk(cloudHeaders()).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true });
    let content = '';
    let finish: string | null | undefined;
    let usageChunks = 0;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      if (chunk.usage) usageChunks++;
      content += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(content).toBe('Hello wörld ✓!');
    expect(finish).toBe('stop');
    expect(usageChunks).toBe(0);
    const [up] = await fake.waitForRequests(1);
    expect(up!.operation).toBe('converse-stream');
    expect(up!.headers.accept).toBe('application/vnd.amazon.eventstream');
  });

  it('stream with include_usage gets the usage chunk from the metadata event', async () => {
    fake.enqueue({ kind: 'stream', events: textEvents(['a'], { inputTokens: 7, outputTokens: 2, totalTokens: 9 }) });
    const stream = await sdk(cloudHeaders()).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toEqual({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
  });

  it('tool calls, non-stream, and the tool round trip (toolUse / toolResult in a user turn)', async () => {
    fake.enqueue({
      kind: 'json',
      body: {
        output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_abc', name: 'get_weather', input: { city: 'Paris' } } }] } },
        stopReason: 'tool_use',
        usage: { inputTokens: 30, outputTokens: 10, totalTokens: 40, cacheReadInputTokens: 5 },
      },
    });
    const client = sdk(cloudHeaders());
    const first = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER_TOOL], tool_choice: 'required' });
    const msg = first.choices[0]!.message;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(msg.content).toBeNull();
    expect(msg.tool_calls).toEqual([{ id: 'tooluse_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    expect(first.usage?.prompt_tokens_details?.cached_tokens).toBe(5);
    const [up1] = await fake.waitForRequests(1);
    expect(up1!.body.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', description: 'Weather for a city', inputSchema: { json: WEATHER_TOOL.function.parameters } } }],
      toolChoice: { any: {} },
    });
    fake.reset();
    const second = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        msg as OpenAI.ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: 'tooluse_abc', content: '18°C, sunny' },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(second.choices[0]!.message.content).toBe('echo: Thanks');
    const [up2] = await fake.waitForRequests(1);
    expect(up2!.body.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_abc', name: 'get_weather', input: { city: 'Paris' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_abc', content: [{ text: '18°C, sunny' }] } }, { text: 'Thanks' }] },
    ]);
    // No tools offered now, but the history has tool blocks: Converse needs a toolConfig.
    expect(up2!.body.toolConfig.tools[0].toolSpec.name).toBe('get_weather');
  });

  it('chat.completions.stream() assembles a streamed tool call', async () => {
    fake.enqueue({ kind: 'stream', events: toolEvents('Let me check.', 'tooluse_xyz', 'get_weather', ['{"ci', 'ty": "Ber', 'lin"}']) });
    const runner = sdk(cloudHeaders()).chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: 'Weather in Berlin?' }], tools: [WEATHER_TOOL] });
    const final = await runner.finalChatCompletion();
    const msg = final.choices[0]!.message;
    expect(msg.content).toBe('Let me check.');
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(msg.tool_calls).toHaveLength(1);
    expect(msg.tool_calls![0]!.id).toBe('tooluse_xyz');
    expect(msg.tool_calls![0]!.function.name).toBe('get_weather');
    expect(JSON.parse(msg.tool_calls![0]!.function.arguments)).toEqual({ city: 'Berlin' });
  });

  it('a virtual key from the bootstrap file signs the same way', async () => {
    const out = await sdk({ 'x-gateway-virtual-key': 'bedrock-prod' }).chat.completions.create({ model: 'amazon.nova-pro-v1:0', messages: [{ role: 'user', content: 'vk' }] });
    expect(out.choices[0]!.message.content).toBe('echo: vk');
    const [up] = await fake.waitForRequests(1);
    expect(up!.auth).toBe('sigv4');
    expect(up!.modelId).toBe('amazon.nova-pro-v1:0');
  });

  it('an inline config with cloud_b_* fields, and an ARN as the model id (one path segment)', async () => {
    const config = {
      provider: 'bedrock',
      custom_host: fake.url,
      cloud_b_access_key_id: fake.credentials.accessKeyId,
      cloud_b_secret_access_key: fake.credentials.secretAccessKey,
      cloud_b_session_token: SESSION,
      cloud_b_region: fake.region,
    };
    const arn = 'arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.anthropic.claude-3-5-sonnet-20240620-v1:0';
    const out = await sdk({ 'x-gateway-config': JSON.stringify(config) }).chat.completions.create({ model: arn, messages: [{ role: 'user', content: 'arn' }] });
    expect(out.choices[0]!.message.content).toBe('echo: arn');
    const [up] = await fake.waitForRequests(1);
    expect(up!.auth).toBe('sigv4');
    expect(up!.rawPath).toBe(`/model/${encodeURIComponent(arn)}/converse`);
    expect(up!.modelId).toBe(arn);
  });

  it('x-gateway-provider: bedrock + Authorization: Bearer is a Bedrock API key, sent as Authorization: Bearer', async () => {
    const out = await sdk({ 'x-gateway-provider': 'bedrock', 'x-gateway-custom-host': fake.url }, fake.apiKey).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'key' }],
    });
    expect(out.choices[0]!.message.content).toBe('echo: key');
    const [up] = await fake.waitForRequests(1);
    expect(up!.auth).toBe('api-key');
    expect(up!.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
  });

  it('a signature Bedrock refuses comes back as its 403 with its message', async () => {
    const client = sdk(cloudHeaders({ 'x-gateway-cloud-b-secret-access-key': 'not-the-right-secret' }));
    const err = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((err as ApiError).status).toBe(403);
    expect((err as ApiError).message).toContain(SIGNATURE_MISMATCH);
    expect((err as ApiError).code).toBe('InvalidSignatureException');
    expect(gw.logText()).not.toContain('not-the-right-secret');
  });

  it('ThrottlingException is a 429 with the provider message and Retry-After passed on', async () => {
    fake.enqueue({ kind: 'error', status: 429, type: 'ThrottlingException', message: 'Too many requests, please wait before trying again.', headers: { 'retry-after': '3' } });
    const err = await sdk(cloudHeaders()).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as ApiError).message).toContain('Too many requests, please wait before trying again.');
    expect((err as ApiError).headers?.get('retry-after')).toBe('3');
  });

  it('a body Converse refuses (ValidationException) is a 400 with its message', async () => {
    fake.enqueue({ kind: 'error', status: 400, type: 'ValidationException', message: 'The model returned the following errors: bad.' });
    const err = await sdk(cloudHeaders()).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as ApiError).message).toContain('The model returned the following errors: bad.');
  });

  it('an exception frame mid-stream ends the stream with an error, never a clean [DONE]', async () => {
    fake.enqueue({ kind: 'stream', events: textEvents(['partial ', 'answer']), exceptionAfter: { count: 3, type: 'throttlingException', message: 'Throttled mid-stream.' } });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...gw.headers(cloudHeaders()) },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('partial ');
    expect(text).toContain('Throttled mid-stream.');
    expect(text).not.toContain('[DONE]');
    // And the SDK surfaces it as an error.
    fake.enqueue({ kind: 'stream', events: textEvents(['partial']), exceptionAfter: { count: 2, type: 'modelStreamErrorException', message: 'The model crashed.' } });
    const stream = await sdk(cloudHeaders()).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true });
    const consumed = (async () => {
      for await (const _ of stream) {
        // drain
      }
    })();
    await expect(consumed).rejects.toThrow(/The model crashed/);
  });

  it('an exception frame before any content is the request’s error status (429), so retry and fallback see it', async () => {
    fake.enqueue({ kind: 'stream', events: [], exceptionAfter: { count: 0, type: 'throttlingException', message: 'Slow down.' } });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gw.headers(cloudHeaders()),
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    expect(res.status).toBe(429);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('Slow down.');
  });

  it('a stream cut before messageStop ends with an error', async () => {
    fake.enqueue({ kind: 'stream', events: textEvents(['a', 'b']), cutAfter: 2 });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gw.headers(cloudHeaders()),
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"content":"a"');
    expect(text).toContain('"error"');
    expect(text).not.toContain('[DONE]');
  });

  it('models.list reads the (signed) foundation model list', async () => {
    const ids: string[] = [];
    for await (const m of sdk(cloudHeaders()).models.list()) ids.push(m.id);
    expect(ids).toEqual(FAKE_FOUNDATION_MODELS.map((m) => m.modelId));
    const [up] = await fake.waitForRequests(1);
    expect(up!.auth).toBe('sigv4');
    expect(up!.operation).toBe('foundation-models');
  });

  it('embeddings: a 400 naming the provider and the endpoint', async () => {
    const err = await sdk(cloudHeaders()).embeddings.create({ model: 'amazon.titan-embed-text-v2:0', input: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as ApiError).message).toMatch(/bedrock.*embeddings/);
    expect(fake.requests).toHaveLength(0);
  });

  it('an OpenAI field Converse cannot honour is a 400 naming it; nothing reaches Bedrock', async () => {
    const err = await sdk(cloudHeaders()).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], n: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as ApiError).param).toBe('n');
    expect(fake.requests).toHaveLength(0);
  });
});
