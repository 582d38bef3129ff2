import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { createSseDecoder } from '../../src/upstream/sse-decode.js';
import { ProviderRegistry, defaultProviders } from '../../src/providers/registry.js';
import type { Provider, ProviderRequest, StreamChunk, Target } from '../../src/providers/types.js';
import { thrownBy } from '../helpers/throws.js';

const registry = new ProviderRegistry(defaultProviders());
const azure = registry.get('azure-openai');
const foundry = registry.get('azure-ai');

const chat = (body: Record<string, unknown> = {}, stream = false, extra: Partial<ProviderRequest> = {}): ProviderRequest => ({
  endpoint: 'chat',
  body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}), ...body },
  stream,
  headers: {},
  ...extra,
});

const build = (p: Provider, req: ProviderRequest, target: Omit<Target, 'provider'>) => {
  const t: Target = { provider: p.descriptor.id, ...target };
  return p.toProvider(req, t, registry.baseUrl(p, t));
};

describe('azure-openai: toProvider', () => {
  it('composes https://{resource}.openai.azure.com/openai/deployments/{id}/{path}?api-version=', () => {
    const u = build(azure, chat(), { api_key: 'k', extra: { resource_name: 'my-res', deployment_id: 'gpt4o', api_version: '2024-10-21' } });
    expect(u.origin).toBe('https://my-res.openai.azure.com');
    expect(u.path).toBe('/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21');
    expect(u.headers['api-key']).toBe('k');
    expect(u.headers.authorization).toBeUndefined();
    const e = build(azure, { endpoint: 'embeddings', body: { model: 'x', input: 'a' }, stream: false, headers: {} }, { api_key: 'k', extra: { resource_name: 'r', deployment_id: 'emb' } });
    expect(e.path).toBe('/openai/deployments/emb/embeddings?api-version=2024-10-21');
  });

  it('custom_host plays the role of …/openai', () => {
    const u = build(azure, chat(), { api_key: 'k', custom_host: 'https://proxy.internal:8443/azure/openai/', extra: { deployment_id: 'd', api_version: '2024-06-01' } });
    expect(u.origin).toBe('https://proxy.internal:8443');
    expect(u.path).toBe('/azure/openai/deployments/d/chat/completions?api-version=2024-06-01');
  });

  it('encodes the deployment id as one path segment and the api-version as a query value', () => {
    const u = build(azure, chat(), { api_key: 'k', extra: { resource_name: 'r', deployment_id: 'a/../b?x', api_version: '1&x=2' } });
    expect(u.path).toBe('/openai/deployments/a%2F..%2Fb%3Fx/chat/completions?api-version=1%26x%3D2');
  });

  it('refuses a resource_name that is not a DNS label, and a missing one, naming the field', () => {
    for (const resource_name of ['evil.com/x#', 'a.b', '-x']) {
      const e = thrownBy(GatewayError, () => build(azure, chat(), { api_key: 'k', extra: { resource_name, deployment_id: 'd' } }));
      expect([e.code, e.param]).toEqual(['invalid_config', 'resource_name']);
    }
    const e = thrownBy(GatewayError, () => build(azure, chat(), { api_key: 'k', extra: { deployment_id: 'd' } }));
    expect([e.code, e.param, e.status]).toEqual(['invalid_config', 'resource_name', 400]);
  });

  it('without deployment_id or deployments: a 400 naming deployment_id', () => {
    const e = thrownBy(GatewayError, () => build(azure, chat(), { api_key: 'k', extra: { resource_name: 'r' } }));
    expect([e.code, e.param]).toEqual(['invalid_config', 'deployment_id']);
  });

  it('sends a JWT-shaped key (Entra ID token) as Authorization: Bearer, any other as api-key', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.sig-_part';
    const u = build(azure, chat(), { api_key: jwt, extra: { resource_name: 'r', deployment_id: 'd' } });
    expect(u.headers.authorization).toBe(`Bearer ${jwt}`);
    expect(u.headers['api-key']).toBeUndefined();
    const k = build(azure, chat(), { api_key: 'abc.def', extra: { resource_name: 'r', deployment_id: 'd' } });
    expect(k.headers['api-key']).toBe('abc.def');
  });

  it('forward_headers cannot replace api-key or Authorization', () => {
    const req = chat({}, false, { headers: { 'api-key': 'client', authorization: 'Bearer c', 'x-tenant': 't' }, forwardHeaders: ['api-key', 'Authorization', 'x-tenant'] });
    const u = build(azure, req, { api_key: 'k', extra: { resource_name: 'r', deployment_id: 'd' } });
    expect(u.headers['api-key']).toBe('k');
    expect(u.headers.Authorization).toBeUndefined();
    expect(u.headers['x-tenant']).toBe('t');
  });

  it('asks for stream usage only from api-version 2024-09-01 on, also when the client sent include_usage: false', () => {
    const at = (api_version: string, body: Record<string, unknown> = {}) =>
      JSON.parse(build(azure, chat(body, true), { api_key: 'k', extra: { resource_name: 'r', deployment_id: 'd', api_version } }).body!);
    expect(at('2024-10-21').stream_options).toEqual({ include_usage: true });
    expect(at('2024-09-01-preview').stream_options).toEqual({ include_usage: true });
    expect(at('2024-08-01-preview').stream_options).toBeUndefined();
    expect(at('2024-10-21', { stream_options: { include_usage: false } }).stream_options).toEqual({ include_usage: true });
    expect(at('2024-08-01-preview', { stream_options: { include_usage: false } }).stream_options).toEqual({ include_usage: false });
  });

  it('models: GET {base}/models?api-version= with no body', () => {
    const u = build(azure, { endpoint: 'models', body: undefined, stream: false, headers: {} }, { api_key: 'k', extra: { resource_name: 'r' } });
    expect([u.method, u.origin + u.path, u.body]).toEqual(['GET', 'https://r.openai.azure.com/openai/models?api-version=2024-10-21', undefined]);
  });
});

describe('azure-ai: toProvider', () => {
  const url = (extra: Record<string, unknown>, custom_host?: string) => {
    const u = build(foundry, chat(), { api_key: 'k', extra, ...(custom_host ? { custom_host } : {}) });
    return u.origin + u.path;
  };

  it('serverless: https://{endpoint or deployment}.{region}.models.ai.azure.com/chat/completions[?api-version=]', () => {
    expect(url({ cloud_a_deployment_type: 'serverless', cloud_a_deployment_name: 'mistral-large', cloud_a_region: 'eastus2', cloud_a_api_version: '2024-05-01-preview' })).toBe(
      'https://mistral-large.eastus2.models.ai.azure.com/chat/completions?api-version=2024-05-01-preview',
    );
    expect(url({ cloud_a_deployment_type: 'serverless', cloud_a_endpoint_name: 'my-ep', cloud_a_region: 'swedencentral' })).toBe(
      'https://my-ep.swedencentral.models.ai.azure.com/chat/completions',
    );
  });

  it('managed: https://{endpoint}.{region}.inference.ml.azure.com/v1/chat/completions with azureml-model-deployment', () => {
    const u = build(foundry, chat(), { api_key: 'k', extra: { cloud_a_deployment_type: 'managed', cloud_a_endpoint_name: 'ep', cloud_a_region: 'westeurope', cloud_a_deployment_name: 'blue' } });
    expect(u.origin + u.path).toBe('https://ep.westeurope.inference.ml.azure.com/v1/chat/completions');
    expect(u.headers['azureml-model-deployment']).toBe('blue');
    expect(u.headers.authorization).toBe('Bearer k');
  });

  it('an endpoint name with dots is the whole host (no region needed)', () => {
    expect(url({ cloud_a_deployment_type: 'managed', cloud_a_endpoint_name: 'ep.eastus.inference.ml.azure.com' })).toBe('https://ep.eastus.inference.ml.azure.com/v1/chat/completions');
    const e = thrownBy(GatewayError, () => url({ cloud_a_deployment_type: 'managed', cloud_a_endpoint_name: 'evil.com/x' }));
    expect(e.param).toBe('cloud_a_endpoint_name');
  });

  it('names the missing field: region, endpoint name, deployment type', () => {
    const param = (extra: Record<string, unknown>) => thrownBy(GatewayError, () => url(extra)).param;
    expect(param({ cloud_a_deployment_type: 'serverless', cloud_a_deployment_name: 'm' })).toBe('cloud_a_region');
    expect(param({ cloud_a_deployment_type: 'managed', cloud_a_deployment_name: 'm', cloud_a_region: 'r' })).toBe('cloud_a_endpoint_name');
    expect(param({ cloud_a_endpoint_name: 'e', cloud_a_region: 'r' })).toBe('cloud_a_deployment_type');
  });

  it('custom_host is the base; completions are not served', () => {
    expect(url({}, 'https://res.services.ai.azure.com/models')).toBe('https://res.services.ai.azure.com/models/chat/completions');
    const e = thrownBy(GatewayError, () => build(foundry, { endpoint: 'completions', body: { model: 'm', prompt: 'p' }, stream: false, headers: {} }, { api_key: 'k', custom_host: 'https://h' }));
    expect(e.code).toBe('unsupported_endpoint');
  });

  it('models: GET /info → a one-model list; an answer without model_name is refused', () => {
    const req: ProviderRequest = { endpoint: 'models', body: undefined, stream: false, headers: {} };
    const r = foundry.fromJson(req, JSON.stringify({ model_name: 'Mistral-Large-2411', model_type: 'chat-completion', model_provider_name: 'Mistral' }));
    expect(r.body).toEqual({ object: 'list', data: [{ id: 'Mistral-Large-2411', object: 'model', created: 0, owned_by: 'Mistral', model_type: 'chat-completion' }] });
    expect(thrownBy(GatewayError, () => foundry.fromJson(req, '{"x":1}')).code).toBe('upstream_invalid_response');
  });
});

/** Bytes → SSE decoder → the provider's reducer, as the upstream layer runs them. */
function runStream(p: Provider, req: ProviderRequest, writes: (string | Buffer)[]): { chunks: StreamChunk[]; end: () => StreamChunk[] } {
  let state = p.streamStart(req);
  const chunks: StreamChunk[] = [];
  const dec = createSseDecoder((ev) => {
    const step = p.fromStreamEvent(state, ev);
    state = step.state;
    chunks.push(...step.chunks);
  });
  for (const w of writes) dec.write(typeof w === 'string' ? Buffer.from(w) : w);
  dec.end();
  return { chunks, end: () => p.streamEnd(state) };
}

describe('azure-openai: stream fixtures', () => {
  const pf = '{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}';
  const content = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"grüß ✓"},"finish_reason":null,"content_filter_results":{}}]}';
  const usage = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}';

  it('CRLF, keep-alive comments and a UTF-8 character split across writes; the prompt-filter chunk kept verbatim', () => {
    const bytes = Buffer.from(`: keep-alive\r\n\r\ndata: ${pf}\r\n\r\ndata: ${content}\r\n\r\n: ping\r\n\r\ndata: ${usage}\r\n\r\ndata: [DONE]\r\n\r\n`);
    const cut = bytes.indexOf(Buffer.from('✓')) + 1; // inside the 3-byte character
    const r = runStream(azure, chat({}, true), [bytes.subarray(0, cut), bytes.subarray(cut)]);
    expect(r.chunks.map((c) => c.data)).toEqual([pf, content, '']);
    expect(JSON.parse(r.chunks[1]!.data).choices[0].delta.content).toBe('grüß ✓');
    // The usage chunk the gateway asked for: its numbers kept, the chunk hidden (the client did not ask).
    expect(r.chunks[2]!.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(r.end()).toEqual([]);
  });

  it('the usage chunk is shown when the client asked for it', () => {
    const r = runStream(azure, chat({ stream_options: { include_usage: true } }, true), [`data: ${usage}\n\ndata: [DONE]\n\n`]);
    expect(r.chunks.map((c) => c.data)).toEqual([usage]);
  });

  it('an error object mid-stream is an upstream error; a stream without [DONE] is interrupted', () => {
    const e = thrownBy(GatewayError, () => runStream(azure, chat({}, true), [`data: ${content}\n\n`, 'data: {"error":{"code":"server_error","message":"boom"}}\n\n']));
    expect([e.code, e.message]).toEqual(['upstream_error', 'boom']);
    const cut = runStream(azure, chat({}, true), [`data: ${pf}\n\ndata: ${content}\n\n`]);
    expect(thrownBy(GatewayError, cut.end).code).toBe('stream_interrupted');
  });

  it('Azure errors keep status, message, code and param; retry-after-ms and retry-after are kept', () => {
    const e = azure.fromError(
      429,
      '{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation have exceeded call rate limit."}}',
      { 'retry-after-ms': '1500', 'retry-after': '2', 'x-ms-region': 'East US' },
    ) as GatewayError;
    expect([e.status, e.upstreamCode, e.message]).toEqual([429, '429', 'Requests to the ChatCompletions_Create Operation have exceeded call rate limit.']);
    expect(e.headers).toEqual({ 'retry-after-ms': '1500', 'retry-after': '2' });
    const f = azure.fromError(400, '{"error":{"code":"content_filter","message":"filtered","param":"prompt","status":400}}', {}) as GatewayError;
    expect([f.status, f.upstreamCode, f.param]).toEqual([400, 'content_filter', 'prompt']);
  });

  it('model_name fills an empty model (JSON and chunks) and leaves Azure\'s own model alone', () => {
    const target: Target = { provider: 'azure-openai', extra: { model_name: 'gpt-4o' } };
    const filled = azure.fromJson(chat(), '{"id":"x","model":"","choices":[]}', target);
    expect([(filled.body as any).model, filled.raw]).toEqual(['gpt-4o', undefined]);
    const kept = azure.fromJson(chat(), '{"id":"x","model":"gpt-4o-2024-08-06","choices":[]}', target);
    expect(kept.raw).toBe('{"id":"x","model":"gpt-4o-2024-08-06","choices":[]}');
    let state = azure.streamStart(chat({}, true), target);
    const step = azure.fromStreamEvent(state, { data: pf });
    state = step.state;
    expect(JSON.parse(step.chunks[0]!.data)).toMatchObject({ model: 'gpt-4o', choices: [], prompt_filter_results: [{ prompt_index: 0 }] });
    expect(azure.fromStreamEvent(state, { data: content }).chunks[0]!.data).toBe(content);
    // Without model_name the prompt-filter chunk passes as Azure sent it.
    expect(azure.fromStreamEvent(azure.streamStart(chat({}, true)), { data: pf }).chunks[0]!.data).toBe(pf);
  });

  it('a JSON answer is sent verbatim, extras included, with its usage read', () => {
    const text = '{"id":"x","object":"chat.completion","model":"gpt-4o-2024-08-06","prompt_filter_results":[],"choices":[{"index":0,"message":{"role":"assistant","content":"a"},"finish_reason":"content_filter","content_filter_results":{"hate":{"filtered":true,"severity":"high"}}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}';
    const r = azure.fromJson(chat(), text);
    expect(r.raw).toBe(text);
    expect(r.usage).toEqual({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
  });
});
