/**
 * The official `openai` SDK as a newcomer configures it: the gateway key as `apiKey` (so it travels as
 * `Authorization: Bearer`), the gateway as `baseURL`, and a virtual key holding the provider
 * credential. Chat, streaming and models.retrieve reach a loopback fake provider, which sees the
 * virtual key's secret and never the gateway key.
 */
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatChunks, FAKE_MODELS, FakeOpenAI, sseFrames } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const VK_SECRET = 'sk-virtual-key-secret-gwkey-0001';

let fake: FakeOpenAI;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway({
    bootstrapYaml: `
virtual_keys:
  vk-newcomer:
    provider: openai
    custom_host: ${fake.baseUrl}
    api_key: ${VK_SECRET}
`,
  });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, defaultHeaders: { 'x-gateway-virtual-key': 'vk-newcomer' } });
});
afterEach(() => fake.reset());
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/** Every header the provider got, as one string: the gateway key must be in none of them. */
const headerText = (h: Record<string, unknown>): string => JSON.stringify(h);

describe('the gateway key as the SDK apiKey, provider credentials from a virtual key', () => {
  it('chat.completions.create answers; the provider sees the virtual key secret, never the gateway key', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
    expect(completion.choices[0]!.message.content).toBe('echo: ping');
    const [up] = await fake.waitForRequests(1);
    expect(up!.headers.authorization).toBe(`Bearer ${VK_SECRET}`);
    expect(headerText(up!.headers)).not.toContain(gw.key);
    expect(gw.logText()).not.toContain(gw.key);
  });

  it('a streamed chat arrives whole, with the same credentials upstream', async () => {
    fake.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['Hel', 'lo'])) } });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
    expect(content).toBe('Hello');
    const [up] = await fake.waitForRequests(1);
    expect(up!.headers.authorization).toBe(`Bearer ${VK_SECRET}`);
    expect(headerText(up!.headers)).not.toContain(gw.key);
  });

  it('the gateway key in Authorization is never also the provider key', async () => {
    // A custom host needs no credential: the call goes out, without the gateway key.
    const headers = { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl };
    const keyless = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0, defaultHeaders: headers });
    await keyless.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
    const [up] = await fake.waitForRequests(1);
    expect(up!.headers.authorization).toBeUndefined();
    expect(headerText(up!.headers)).not.toContain(gw.key);
    // The provider's own host: no credential is a 400 that says where the provider key goes.
    const bare = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': 'openai' } });
    const err = await bare.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('missing_provider_credential');
    expect((err as Error).message).toContain('with the gateway key in x-gateway-api-key');
  });

  it('a key that is not a gateway key is an AuthenticationError saying which header carries what', async () => {
    const stranger = new OpenAI({ apiKey: 'sk-provider-key-not-a-gateway-key', baseURL: `${gw.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-gateway-virtual-key': 'vk-newcomer' } });
    const err = await stranger.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    const message = (err as Error).message;
    expect(message).toContain('x-gateway-api-key');
    expect(message).toContain('Authorization: Bearer <gateway key>');
    expect(message).not.toContain('sk-provider-key-not-a-gateway-key');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('models.retrieve (GET /v1/models/{id})', () => {
  it('answers the model object the listing has', async () => {
    const model = await client.models.retrieve('gpt-4o-mini');
    expect(model).toEqual(FAKE_MODELS[0]);
    const [up] = await fake.waitForRequests(1);
    expect([up!.method, up!.path]).toEqual(['GET', '/v1/models']);
    expect(up!.headers.authorization).toBe(`Bearer ${VK_SECRET}`);
  });

  it('finds an id with a slash (the SDK percent-encodes it)', async () => {
    const llama = { id: 'meta-llama/Llama-3.1-8B', object: 'model', created: 1700000001, owned_by: 'meta' };
    fake.enqueue('/v1/models', { json: { object: 'list', data: [...FAKE_MODELS, llama] } });
    expect(await client.models.retrieve(llama.id)).toEqual(llama);
  });

  it('an id the listing does not have is a NotFoundError model_not_found, not retried', async () => {
    const err = await client.models
      .retrieve('gpt-no-such-model')
      .withResponse()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const nf = err as InstanceType<typeof OpenAI.NotFoundError>;
    expect([nf.status, nf.code, nf.param]).toEqual([404, 'model_not_found', 'model']);
    expect(nf.message).toContain('gpt-no-such-model');
    expect(nf.headers.get('x-should-retry')).toBe('false');
    expect(fake.requests.filter((r) => r.path === '/v1/models')).toHaveLength(1);
  });

  it('a listing the provider cannot give stays the provider error, not a 404', async () => {
    fake.enqueue('/v1/models', { status: 401, json: { error: { message: 'bad key', type: 'invalid_request_error', code: 'invalid_api_key' } } });
    const err = await client.models.retrieve('gpt-4o-mini').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
  });
});
