import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatChunks, FAKE_MODELS, fakeEmbedding, FakeOpenAI, openAIError, sseFrames } from '../fakes/openai-server.js';

const PROVIDER_KEY = 'sk-provider-secret';

let fake: FakeOpenAI;
let gw: TestGateway;
let client: OpenAI;

/** The official SDK, pointed at the gateway, reaching the fake through custom_host. */
function sdk(headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    apiKey: PROVIDER_KEY,
    baseURL: `${gw.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: {
      'x-gateway-api-key': gw.key,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': fake.baseUrl,
      ...headers,
    },
  });
}

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway();
  client = sdk();
});

afterEach(() => {
  fake.reset();
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe('the official openai SDK through the gateway', () => {
  it('chat.completions.create (non-stream)', async () => {
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] })
      .withResponse();
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message.content).toBe('echo: ping');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(response.headers.get('x-gateway-trace-id')).toBeTruthy();
    const [up] = await fake.waitForRequests(1);
    expect(up!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
  });

  it('chat.completions.create (stream) with for await', async () => {
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['Hel', 'lo', ' wörld ✓'])) } });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let content = '';
    let chunks = 0;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      chunks++;
      expect(chunk.object).toBe('chat.completion.chunk');
      content += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(content).toBe('Hello wörld ✓');
    expect(chunks).toBe(5);
    expect(finish).toBe('stop');
  });

  it('chat.completions.create (stream) with include_usage gets the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toEqual({ prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 });
  });

  it('completions.create (non-stream)', async () => {
    const completion = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this' });
    expect(completion.object).toBe('text_completion');
    expect(completion.choices[0]!.text).toBe('echo: Say this');
  });

  it('completions.create (stream)', async () => {
    const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this', stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    expect(text).toBe('Hello');
  });

  it('embeddings.create with the default encoding (the SDK asks for base64 and decodes)', async () => {
    const res = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['first text', 'second text'] });
    const [up] = await fake.waitForRequests(1);
    expect(up!.body.encoding_format).toBe('base64');
    expect(res.data).toHaveLength(2);
    expect(res.data[0]!.embedding).toEqual(fakeEmbedding('first text'));
    expect(res.data[1]!.embedding).toEqual(fakeEmbedding('second text'));
  });

  it("embeddings.create with encoding_format 'float'", async () => {
    const res = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello', encoding_format: 'float', dimensions: 4 });
    const [up] = await fake.waitForRequests(1);
    expect(up!.body.encoding_format).toBe('float');
    expect(res.data[0]!.embedding).toEqual(fakeEmbedding('hello', 4));
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('models.list', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(FAKE_MODELS.map((m) => m.id));
    const [up] = await fake.waitForRequests(1);
    expect(up!.method).toBe('GET');
    expect(up!.path).toBe('/v1/models');
  });
});

describe("the SDK's error handling of the gateway's envelope", () => {
  it('an upstream 429 is a RateLimitError with the provider message', async () => {
    fake.enqueue('/v1/chat/completions', openAIError(429, 'Rate limit reached for requests'));
    const err = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const e = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e.status).toBe(429);
    expect(e.message).toContain('Rate limit reached for requests');
    expect(e.code).toBe('rate_limit_exceeded');
  });

  it('a gateway 400 (invalid config) is a BadRequestError with the message', async () => {
    const bad = sdk({ 'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: PROVIDER_KEY, retry: { attempts: 99 } }) });
    const err = await bad.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.message).toContain('config.retry.attempts');
    expect(e.code).toBe('invalid_config');
    expect(e.param).toBe('config.retry.attempts');
    expect(fake.requests).toHaveLength(0);
  });

  it('a gateway 401 is an AuthenticationError', async () => {
    const noKey = sdk({ 'x-gateway-api-key': 'sk-not-the-gateway-key-0000000' });
    const err = await noKey.models.list().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
    expect(fake.requests).toHaveLength(0);
  });

  it('a cut stream makes the async iterator throw instead of ending cleanly', async () => {
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'])), cutAfter: 2 } });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let content = '';
    const run = async (): Promise<void> => {
      for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
    };
    const err = await run().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toMatch(/stream ended before it was complete/i);
    expect(content).toBe('Hel');
  });

  it('an upstream error mid-stream makes the async iterator throw with its message', async () => {
    const chunks = chatChunks(['Hel', 'lo']);
    fake.enqueue('/v1/chat/completions', {
      stream: { frames: sseFrames([chunks[0]!, chunks[1]!, { error: { message: 'model overloaded mid-stream', type: 'server_error' } }]) },
    });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const run = async (): Promise<void> => {
      for await (const _ of stream) void _;
    };
    const err = await run().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toContain('model overloaded mid-stream');
  });
});
