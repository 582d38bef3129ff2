import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { azureEmbedding, azureFrames, FakeAzure, promptFilterChunk } from '../fakes/azure-server.js';

const AZURE_KEY = '0123456789abcdef0123456789abcdef';
// An Entra ID access token's shape (three base64url parts); the fake accepts exactly this one.
const ENTRA_TOKEN = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2NvZ25pdGl2ZXNlcnZpY2VzLmF6dXJlLmNvbSJ9.c2lnbmF0dXJl';
const DEPLOYMENTS = { 'gpt4o-prod': 'gpt-4o-2024-08-06', 'gpt4o-canary': 'gpt-4o-2024-11-20', 'embed-small': 'text-embedding-3-small' };

let fake: FakeAzure;
let gw: TestGateway;
/** The loadbalance test's random source; other tests do not pick. */
let picks: number[] = [];

function sdk(headers: Record<string, string>, apiKey = AZURE_KEY): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': gw.key, ...headers } });
}

/** Provider + key in Authorization + the x-gateway-cloud-a-* headers, reaching the fake through custom_host. */
function byHeaders(extra: Record<string, string> = {}, apiKey = AZURE_KEY): OpenAI {
  return sdk(
    {
      'x-gateway-provider': 'azure-openai',
      'x-gateway-custom-host': `${fake.origin}/openai`,
      'x-gateway-cloud-a-deployment-id': 'gpt4o-prod',
      'x-gateway-cloud-a-api-version': '2024-10-21',
      ...extra,
    },
    apiKey,
  );
}

const byConfig = (config: unknown): OpenAI => sdk({ 'x-gateway-config': JSON.stringify(config) });

beforeAll(async () => {
  fake = await FakeAzure.start({ apiKey: AZURE_KEY, entraToken: ENTRA_TOKEN, deployments: DEPLOYMENTS });
  gw = await startGateway({
    random: () => picks.shift() ?? 0,
    env: {},
    bootstrapYaml: `virtual_keys:\n  azure-prod:\n    provider: azure-openai\n    api_key: ${AZURE_KEY}\n    custom_host: ${fake.origin}/openai\n    deployment_id: gpt4o-canary\n    api_version: 2024-10-21\n`,
  });
});

afterEach(() => {
  fake.reset();
  picks = [];
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe('azure-openai through the gateway with the official SDK', () => {
  it('chat (non-stream): deployment path, api-version, api-key; Azure model and filter results kept', async () => {
    const { data, response } = await byHeaders()
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'ping' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('echo: ping');
    expect(data.model).toBe('gpt-4o-2024-08-06');
    expect((data as any).prompt_filter_results[0].prompt_index).toBe(0);
    expect((data.choices[0] as any).content_filter_results.hate.filtered).toBe(false);
    expect(data.usage?.total_tokens).toBe(12);
    expect(response.headers.get('x-gateway-provider')).toBe('azure-openai');
    const [up] = fake.requests;
    expect(up!.path).toBe('/openai/deployments/gpt4o-prod/chat/completions');
    expect(up!.query.get('api-version')).toBe('2024-10-21');
    expect(up!.headers['api-key']).toBe(AZURE_KEY);
    expect(up!.headers.authorization).toBeUndefined();
  });

  it('chat (stream): the prompt-filter chunk (choices: []) passes, the asked-for usage chunk is hidden', async () => {
    const stream = await byHeaders().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'grüß dich' }], stream: true });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks[0]!.choices).toEqual([]);
    expect((chunks[0] as any).prompt_filter_results).toBeDefined();
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('echo: grüß dich');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(fake.requests[0]!.body.stream_options).toEqual({ include_usage: true });
  });

  it('x-gateway-cloud-a-model-name fills the empty model of the prompt-filter chunk; Azure\'s own model is kept', async () => {
    const stream = await byHeaders({ 'x-gateway-cloud-a-model-name': 'gpt-4o' }).chat.completions.create({
      model: 'anything',
      messages: [{ role: 'user', content: 'm' }],
      stream: true,
    });
    const models: string[] = [];
    for await (const c of stream) models.push(c.model);
    expect(models[0]).toBe('gpt-4o');
    expect(new Set(models.slice(1))).toEqual(new Set(['gpt-4o-2024-08-06']));
  });

  it('chat (stream) with include_usage gets the usage chunk', async () => {
    const stream = await byHeaders().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) if (c.usage) usage = c.usage;
    expect(usage).toEqual({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  });

  it('an api-version older than 2024-09-01 is not sent stream_options (Azure would refuse it); the stream still works', async () => {
    const stream = await byHeaders({ 'x-gateway-cloud-a-api-version': '2024-06-01' }).chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'old' }],
      stream: true,
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('echo: old');
    expect(fake.requests[0]!.query.get('api-version')).toBe('2024-06-01');
    expect(fake.requests[0]!.body.stream_options).toBeUndefined();
  });

  const tools: OpenAI.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  ];

  it('chat.completions.stream() assembles the tool call (empty content, Azure chunks)', async () => {
    const runner = byHeaders().chat.completions.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'weather in Zürich?' }], tools });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls![0]!;
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Zürich' });
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('chat (non-stream) with a tool call', async () => {
    const res = await byHeaders().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'weather?' }], tools });
    expect(res.choices[0]!.message.tool_calls![0]!.id).toBe('call_az1');
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('completions and embeddings (base64 by default, float when asked) on their deployments', async () => {
    const c = await byHeaders().completions.create({ model: 'x', prompt: 'Say this' });
    expect(c.choices[0]!.text).toBe('echo: Say this');
    const embed = byHeaders({ 'x-gateway-cloud-a-deployment-id': 'embed-small' });
    const b = await embed.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'three'] });
    expect(b.data[1]!.embedding).toEqual(azureEmbedding('three'));
    const f = await embed.embeddings.create({ model: 'text-embedding-3-small', input: 'one', encoding_format: 'float' });
    expect(f.data[0]!.embedding).toEqual(azureEmbedding('one'));
    expect(fake.requests.map((r) => [r.path, r.body.encoding_format])).toEqual([
      ['/openai/deployments/gpt4o-prod/completions', undefined],
      ['/openai/deployments/embed-small/embeddings', 'base64'],
      ['/openai/deployments/embed-small/embeddings', 'float'],
    ]);
  });

  it('models.list is the data-plane list of GET /openai/models?api-version=', async () => {
    const ids: string[] = [];
    for await (const m of byHeaders().models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual([...new Set(Object.values(DEPLOYMENTS))].sort());
    expect(fake.requests[0]!.method).toBe('GET');
    expect(fake.requests[0]!.path).toBe('/openai/models');
    expect(fake.requests[0]!.query.get('api-version')).toBe('2024-10-21');
  });

  it('an Entra ID token in Authorization is sent as Authorization: Bearer, not api-key', async () => {
    const res = await byHeaders({}, ENTRA_TOKEN).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'entra' }] });
    expect(res.choices[0]!.message.content).toBe('echo: entra');
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${ENTRA_TOKEN}`);
    expect(fake.requests[0]!.headers['api-key']).toBeUndefined();
  });

  it('a virtual key from the bootstrap file carries key, host, deployment and api-version', async () => {
    const res = await sdk({ 'x-gateway-virtual-key': 'azure-prod' }).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'vk' }] });
    expect(res.model).toBe('gpt-4o-2024-11-20');
    expect(fake.requests[0]!.path).toBe('/openai/deployments/gpt4o-canary/chat/completions');
  });

  describe('deployments in a config', () => {
    const config = (isDefault: boolean) => ({
      provider: 'azure-openai',
      api_key: AZURE_KEY,
      custom_host: `${fake.origin}/openai`,
      deployments: [
        { alias: 'gpt-4o', deployment_id: 'gpt4o-prod', api_version: '2024-10-21', is_default: isDefault },
        { alias: 'gpt-4o-new', deployment_id: 'gpt4o-canary', api_version: '2025-04-01-preview' },
      ],
    });

    it("the request's model picks the alias, with its api_version", async () => {
      const res = await byConfig(config(false)).chat.completions.create({ model: 'gpt-4o-new', messages: [{ role: 'user', content: 'a' }] });
      expect(res.model).toBe('gpt-4o-2024-11-20');
      expect(fake.requests[0]!.path).toBe('/openai/deployments/gpt4o-canary/chat/completions');
      expect(fake.requests[0]!.query.get('api-version')).toBe('2025-04-01-preview');
    });

    it('an unknown model goes to the is_default deployment', async () => {
      const res = await byConfig(config(true)).chat.completions.create({ model: 'other', messages: [{ role: 'user', content: 'a' }] });
      expect(res.model).toBe('gpt-4o-2024-08-06');
    });

    it('an unknown model with no default is a 400 naming model and the aliases; nothing is sent', async () => {
      const e = await byConfig(config(false))
        .chat.completions.create({ model: 'other', messages: [{ role: 'user', content: 'a' }] })
        .then(() => undefined, (x: unknown) => x as InstanceType<typeof OpenAI.BadRequestError>);
      expect(e).toBeInstanceOf(OpenAI.BadRequestError);
      expect(e!.param).toBe('model');
      expect(e!.message).toContain('gpt-4o, gpt-4o-new');
      expect(fake.requests).toHaveLength(0);
    });
  });

  it('loadbalance across two Azure deployments sends to each by weight', async () => {
    const target = (deployment_id: string) => ({
      provider: 'azure-openai',
      api_key: AZURE_KEY,
      custom_host: `${fake.origin}/openai`,
      deployment_id,
      api_version: '2024-10-21',
    });
    const client = byConfig({ strategy: { mode: 'loadbalance' }, targets: [target('gpt4o-prod'), target('gpt4o-canary')] });
    picks = [0.1, 0.9, 0.2, 0.8];
    const got: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { data, response } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `${i}` }] }).withResponse();
      got.push(`${data.model} ${response.headers.get('x-gateway-target')}`);
    }
    expect(got).toEqual([
      'gpt-4o-2024-08-06 config.targets[0]',
      'gpt-4o-2024-11-20 config.targets[1]',
      'gpt-4o-2024-08-06 config.targets[0]',
      'gpt-4o-2024-11-20 config.targets[1]',
    ]);
    expect(fake.requests.map((r) => r.path.split('/')[3])).toEqual(['gpt4o-prod', 'gpt4o-canary', 'gpt4o-prod', 'gpt4o-canary']);
  });

  describe('errors', () => {
    it('a wrong key is the provider 401 with its message', async () => {
      const e = await byHeaders({}, 'ffffffffffffffffffffffffffffffff')
        .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a' }] })
        .then(() => undefined, (x: unknown) => x as InstanceType<typeof OpenAI.APIError>);
      expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(e!.message).toContain('Access denied due to invalid subscription key');
    });

    it('an unknown deployment is the provider 404 DeploymentNotFound', async () => {
      const e = await byHeaders({ 'x-gateway-cloud-a-deployment-id': 'nope' })
        .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a' }] })
        .then(() => undefined, (x: unknown) => x as InstanceType<typeof OpenAI.APIError>);
      expect(e).toBeInstanceOf(OpenAI.NotFoundError);
      expect(e!.code).toBe('DeploymentNotFound');
    });

    it('a filtered prompt is the 400 content_filter with param prompt', async () => {
      fake.enqueue({
        status: 400,
        json: { error: { code: 'content_filter', message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", param: 'prompt', status: 400, innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { hate: { filtered: true, severity: 'high' } } } } },
      });
      const e = await byHeaders()
        .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a' }] })
        .then(() => undefined, (x: unknown) => x as InstanceType<typeof OpenAI.APIError>);
      expect(e).toBeInstanceOf(OpenAI.BadRequestError);
      expect(e!.code).toBe('content_filter');
      expect(e!.param).toBe('prompt');
    });

    it('429 with retry-after-ms is retried after that wait when the config says so', async () => {
      fake.enqueue({ status: 429, headers: { 'retry-after-ms': '20', 'retry-after': '1' }, json: { error: { code: '429', message: 'Requests to the ChatCompletions_Create Operation have exceeded call rate limit.' } } });
      const client = byConfig({
        provider: 'azure-openai',
        api_key: AZURE_KEY,
        custom_host: `${fake.origin}/openai`,
        deployment_id: 'gpt4o-prod',
        retry: { attempts: 1, use_retry_after_headers: true },
      });
      const { data, response } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'again' }] }).withResponse();
      expect(data.choices[0]!.message.content).toBe('echo: again');
      expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
      expect(fake.requests).toHaveLength(2);
    });

    it('a 429 without retry is a RateLimitError with the provider message', async () => {
      fake.enqueue({ status: 429, headers: { 'retry-after': '3' }, json: { error: { code: '429', message: 'Rate limit is exceeded. Try again in 3 seconds.' } } });
      const e = await byHeaders()
        .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a' }] })
        .then(() => undefined, (x: unknown) => x as InstanceType<typeof OpenAI.APIError>);
      expect(e).toBeInstanceOf(OpenAI.RateLimitError);
      expect(e!.message).toContain('Rate limit is exceeded');
    });

    it('an error mid-stream ends the client stream with an error, not a clean end', async () => {
      const c = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { content: 'part' }, finish_reason: null }] };
      fake.enqueue({
        frames: [`data: ${JSON.stringify(promptFilterChunk)}\n\n`, `data: ${JSON.stringify(c)}\n\n`, `data: ${JSON.stringify({ error: { code: 'server_error', message: 'The server had an error.' } })}\n\n`],
      });
      const stream = await byHeaders().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a' }], stream: true });
      let text = '';
      const e = await (async () => {
        for await (const ch of stream) text += ch.choices[0]?.delta?.content ?? '';
      })().then(() => undefined, (x: unknown) => x as Error);
      expect(text).toBe('part');
      expect(e).toBeInstanceOf(Error);
      expect(e!.message).toContain('The server had an error.');
    });

    it('content_filter finish and the asynchronous-filter chunk without delta pass through', async () => {
      const base = { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o' };
      fake.enqueue({
        frames: azureFrames([
          promptFilterChunk,
          { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Sure' }, finish_reason: null }] },
          { ...base, choices: [{ index: 0, finish_reason: null, content_filter_results: { violence: { filtered: true, severity: 'medium' } }, content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: 4 } }] },
          { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] },
        ]),
      });
      const stream = await byHeaders().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a' }], stream: true });
      const got: OpenAI.ChatCompletionChunk[] = [];
      for await (const ch of stream) got.push(ch);
      expect(got).toHaveLength(4);
      expect((got[2]!.choices[0] as any).content_filter_offsets.end_offset).toBe(4);
      expect(got[3]!.choices[0]!.finish_reason).toBe('content_filter');
    });
  });
});

describe('azure-ai (AI Foundry endpoints) through the gateway', () => {
  const serverless = (extra: Record<string, unknown> = {}) =>
    byConfig({ provider: 'azure-ai', api_key: AZURE_KEY, custom_host: fake.origin, cloud_a_deployment_type: 'serverless', ...extra });

  it('chat (non-stream and stream) with the Bearer key at {base}/chat/completions', async () => {
    const res = await serverless({ cloud_a_api_version: '2024-05-01-preview' }).chat.completions.create({ model: 'mistral-large', messages: [{ role: 'user', content: 'bonjour' }] });
    expect(res.choices[0]!.message.content).toBe('echo: bonjour');
    expect(fake.requests[0]!.path).toBe('/chat/completions');
    expect(fake.requests[0]!.query.get('api-version')).toBe('2024-05-01-preview');
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${AZURE_KEY}`);
    const stream = await serverless().chat.completions.create({ model: 'mistral-large', messages: [{ role: 'user', content: 'ça va' }], stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('echo: ça va');
  });

  it('a managed endpoint names its deployment in azureml-model-deployment', async () => {
    const client = byConfig({ provider: 'azure-ai', api_key: AZURE_KEY, custom_host: `${fake.origin}/v1`, cloud_a_deployment_type: 'managed', cloud_a_endpoint_name: 'ep', cloud_a_deployment_name: 'blue' });
    const res = await client.chat.completions.create({ model: 'llama', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0]!.message.content).toBe('echo: hi');
    expect(fake.requests[0]!.path).toBe('/v1/chat/completions');
    expect(fake.requests[0]!.headers['azureml-model-deployment']).toBe('blue');
  });

  it('models.list is the endpoint\'s one model from GET /info', async () => {
    const models: OpenAI.Model[] = [];
    for await (const m of serverless().models.list()) models.push(m);
    expect(models.map((m) => [m.id, m.owned_by])).toEqual([['gpt-4o-2024-08-06', 'Mistral']]);
    expect(fake.requests[0]!.path).toBe('/info');
  });

  it('completions is a 400 naming the provider and the endpoint', async () => {
    const e = await serverless()
      .completions.create({ model: 'x', prompt: 'a' })
      .then(() => undefined, (x: unknown) => x as InstanceType<typeof OpenAI.APIError>);
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e!.code).toBe('unsupported_endpoint');
    expect(e!.message).toContain('azure-ai');
    expect(fake.requests).toHaveLength(0);
  });
});
