import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { OPENAI_COMPATIBLE } from '../../src/providers/openai-compatible/descriptors.js';
import {
  fromOpenAIError,
  fromOpenAIJson,
  fromOpenAIStreamEvent,
  openAIStreamEnd,
  openAIStreamStart,
  type OpenAIStreamState,
} from '../../src/providers/openai-compatible/from-provider.js';
import { openAICompatible } from '../../src/providers/openai-compatible/index.js';
import { providerFields } from '../../src/config/provider-fields.js';

const keyOnly = providerFields('api_key');
import { splitBaseUrl, toOpenAICompatible } from '../../src/providers/openai-compatible/to-provider.js';
import { ProviderRegistry, defaultProviders } from '../../src/providers/registry.js';
import type { ProviderDescriptor, ProviderRequest, SseEvent, StreamChunk, Target } from '../../src/providers/types.js';
import { thrownBy } from '../helpers/throws.js';

const descriptor = (id: string): ProviderDescriptor => {
  const d = OPENAI_COMPATIBLE.find((x) => x.id === id);
  if (!d) throw new Error(`no descriptor ${id}`);
  return d;
};
const OPENAI = descriptor('openai');
const GROQ = descriptor('groq');
/** A host the gateway does not ask for stream usage. */
const OPENROUTER = descriptor('openrouter');

const chatBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

function request(over: Partial<ProviderRequest> = {}): ProviderRequest {
  return { endpoint: 'chat', body: chatBody, stream: false, headers: {}, ...over };
}

const target = (over: Partial<Target> = {}): Target => ({ provider: 'openai', api_key: 'sk-test-fake', ...over });

const thrown = (fn: () => unknown): GatewayError => thrownBy(GatewayError, fn);

// ---------------------------------------------------------------------------------------------
// toProvider

describe('toOpenAICompatible', () => {
  it('splits the base URL into origin and path prefix and appends the endpoint path', () => {
    const up = toOpenAICompatible(OPENAI, request(), target(), 'https://api.openai.com/v1');
    expect(up.origin).toBe('https://api.openai.com');
    expect(up.path).toBe('/v1/chat/completions');
    expect(up.method).toBe('POST');
  });

  it.each([
    ['http://10.1.2.3:8000/v1/', 'http://10.1.2.3:8000', '/v1/embeddings'],
    ['http://llm.internal:11434', 'http://llm.internal:11434', '/embeddings'],
    ['https://gw.example.com/a/b/openai/v1//', 'https://gw.example.com', '/a/b/openai/v1/embeddings'],
  ])('base %s → origin %s, path %s', (base, origin, path) => {
    const up = toOpenAICompatible(OPENAI, request({ endpoint: 'embeddings', body: { model: 'e', input: 'x' } }), target(), base);
    expect(up.origin).toBe(origin);
    expect(up.path).toBe(path);
    expect(splitBaseUrl(base).origin).toBe(origin);
  });

  it('sends a custom_host target to its host', () => {
    const up = toOpenAICompatible(GROQ, request(), target({ custom_host: 'https://llm.example.com/v1' }), 'https://llm.example.com/v1');
    expect(up.origin).toBe('https://llm.example.com');
  });

  it('sends the api key as a bearer token, and no authorization when there is no key', () => {
    expect(toOpenAICompatible(OPENAI, request(), target(), 'https://api.openai.com/v1').headers.authorization).toBe('Bearer sk-test-fake');
    const noKey = toOpenAICompatible(OPENAI, request(), { provider: 'openai' }, 'https://api.openai.com/v1');
    expect(noKey.headers).not.toHaveProperty('authorization');
  });

  it('adds OpenAI-Organization and OpenAI-Project only when set', () => {
    const up = toOpenAICompatible(
      OPENAI,
      request(),
      target({ vendor_organization: 'org-fake', vendor_project: 'proj_fake' }),
      'https://api.openai.com/v1',
    );
    expect(up.headers['openai-organization']).toBe('org-fake');
    expect(up.headers['openai-project']).toBe('proj_fake');
    const plain = toOpenAICompatible(OPENAI, request(), target(), 'https://api.openai.com/v1');
    expect(plain.headers).not.toHaveProperty('openai-organization');
    expect(plain.headers).not.toHaveProperty('openai-project');
  });

  it('copies only the forward_headers named, with the case the config used', () => {
    const up = toOpenAICompatible(
      OPENAI,
      request({
        headers: { 'x-tenant': 'acme', 'x-multi': ['a', 'b'], 'x-secret': 'do-not-copy', cookie: 'c=1' },
        forwardHeaders: ['X-Tenant', 'x-multi', 'X-Absent'],
      }),
      target(),
      'https://api.openai.com/v1',
    );
    expect(up.headers['X-Tenant']).toBe('acme');
    expect(up.headers['x-multi']).toBe('a, b');
    expect(up.headers).not.toHaveProperty('x-tenant');
    expect(up.headers).not.toHaveProperty('X-Absent');
    expect(up.headers).not.toHaveProperty('x-secret');
    expect(up.headers).not.toHaveProperty('cookie');
    expect(Object.keys(up.headers).sort()).toEqual(['X-Tenant', 'authorization', 'content-type', 'x-multi']);
  });

  it('never forwards framing, credential or gateway headers, whatever their case', () => {
    const up = toOpenAICompatible(
      OPENAI,
      request({
        headers: {
          authorization: 'Bearer client-token',
          host: 'evil.example',
          'content-length': '1',
          'content-type': 'text/plain',
          'x-gateway-api-key': 'gw-secret',
          'proxy-authorization': 'p',
          'x-tenant': 'acme',
        },
        forwardHeaders: ['Authorization', 'Host', 'Content-Length', 'Content-Type', 'X-Gateway-Api-Key', 'Proxy-Authorization', 'X-Tenant'],
      }),
      target(),
      'https://api.openai.com/v1',
    );
    expect(Object.keys(up.headers).sort()).toEqual(['X-Tenant', 'authorization', 'content-type']);
    expect(up.headers.authorization).toBe(`Bearer ${target().api_key}`);
    expect(up.headers['content-type']).toBe('application/json');
  });

  it('forwards no client header when forward_headers is not set', () => {
    const up = toOpenAICompatible(OPENAI, request({ headers: { 'x-tenant': 'acme' } }), target(), 'https://api.openai.com/v1');
    expect(up.headers).not.toHaveProperty('x-tenant');
  });

  it('injects stream_options.include_usage on an openai stream when the client set none', () => {
    const up = toOpenAICompatible(OPENAI, request({ stream: true, body: { ...chatBody, stream: true } }), target(), 'https://api.openai.com/v1');
    expect(JSON.parse(up.body!)).toEqual({ ...chatBody, stream: true, stream_options: { include_usage: true } });
    expect(up.headers.accept).toBe('text/event-stream');
    expect(up.stream).toBe(true);
  });

  it('asks for usage even when the client sent include_usage: false or other stream_options (kept), and hides the chunk then', () => {
    for (const so of [{ include_usage: false }, { include_obfuscation: false }, { include_usage: true, include_obfuscation: false }]) {
      const body = { ...chatBody, stream: true, stream_options: so };
      const up = toOpenAICompatible(OPENAI, request({ stream: true, body }), target(), 'https://api.openai.com/v1');
      expect(JSON.parse(up.body!).stream_options).toEqual({ ...so, include_usage: true });
      expect(openAIStreamStart(request({ stream: true, body }), true).hideUsageChunk).toBe(so.include_usage !== true);
    }
  });

  it('does not inject stream_options for a descriptor without injectStreamUsage, nor on non-stream requests', () => {
    const body = { ...chatBody, stream: true };
    const plain = toOpenAICompatible(OPENROUTER, request({ stream: true, body }), target(), 'https://openrouter.ai/api/v1');
    expect(JSON.parse(plain.body!)).not.toHaveProperty('stream_options');
    const nonStream = toOpenAICompatible(OPENAI, request(), target(), 'https://api.openai.com/v1');
    expect(JSON.parse(nonStream.body!)).not.toHaveProperty('stream_options');
    expect(nonStream.headers).not.toHaveProperty('accept');
  });

  it('does not mutate the request body when injecting', () => {
    const body = { ...chatBody, stream: true };
    toOpenAICompatible(OPENAI, request({ stream: true, body }), target(), 'https://api.openai.com/v1');
    expect(body).not.toHaveProperty('stream_options');
  });

  it('sends GET without body or content-type when there is no body (models)', () => {
    const up = toOpenAICompatible(OPENAI, request({ endpoint: 'models', body: undefined }), target(), 'https://api.openai.com/v1');
    expect(up.method).toBe('GET');
    expect(up.path).toBe('/v1/models');
    expect(up.body).toBeUndefined();
    expect(up.headers).not.toHaveProperty('content-type');
  });

  it('refuses an endpoint the descriptor does not serve', () => {
    const chatOnly: ProviderDescriptor = { id: 'chat-only', paths: { chat: '/chat' }, auth: { header: 'x-api-key' }, fields: keyOnly };
    const e = thrown(() => toOpenAICompatible(chatOnly, request({ endpoint: 'embeddings' }), target(), 'https://x.example/v1'));
    expect(e.code).toBe('unsupported_endpoint');
    expect(e.status).toBe(400);
    expect(e.message).toContain('chat-only');
  });

  it('sends a descriptor\'s fixed extra headers, and a client cannot forward over them', () => {
    const d: ProviderDescriptor = {
      id: 'versioned',
      paths: { chat: '/messages' },
      auth: { header: 'x-api-key' },
      extraHeaders: { 'anthropic-version': '2023-06-01' },
      fields: keyOnly,
    };
    const req = request({ headers: { 'anthropic-version': '1999-01-01' }, forwardHeaders: ['Anthropic-Version'] });
    const up = toOpenAICompatible(d, req, target(), 'https://x.example/v1');
    expect(up.headers['anthropic-version']).toBe('2023-06-01');
    expect(up.headers).not.toHaveProperty('Anthropic-Version');
    expect(up.headers['x-api-key']).toBe('sk-test-fake');
  });

  it('uses a raw key for a descriptor without an auth scheme', () => {
    const d: ProviderDescriptor = { id: 'raw', paths: { chat: '/chat' }, auth: { header: 'api-key' }, fields: keyOnly };
    const up = toOpenAICompatible(d, request(), target(), 'https://x.example/v1');
    expect(up.headers['api-key']).toBe('sk-test-fake');
    expect(up.headers).not.toHaveProperty('authorization');
  });
});

// ---------------------------------------------------------------------------------------------
// fromProvider: JSON and errors

describe('fromOpenAIJson', () => {
  it('keeps the raw text verbatim and reads usage', () => {
    const raw = '{ "id":"chatcmpl-1",  "object":"chat.completion","choices":[],\n "usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}';
    const r = fromOpenAIJson(request(), raw);
    expect(r.raw).toBe(raw);
    expect(r.body).toEqual(JSON.parse(raw));
    expect(r.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it('reads the cache-token details when the provider reports them, and only then', () => {
    const u = fromOpenAIJson(
      request(),
      '{"usage":{"prompt_tokens":100,"completion_tokens":4,"total_tokens":104,"prompt_tokens_details":{"cached_tokens":64,"cache_write_tokens":32,"audio_tokens":0}}}',
    ).usage;
    expect(u).toEqual({ prompt_tokens: 100, completion_tokens: 4, total_tokens: 104, prompt_tokens_details: { cached_tokens: 64, cache_write_tokens: 32 } });
    const none = fromOpenAIJson(request(), '{"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_tokens_details":{"audio_tokens":0}}}').usage;
    expect(none).not.toHaveProperty('prompt_tokens_details');
  });

  it('computes total_tokens when absent and defaults missing counts to 0', () => {
    expect(fromOpenAIJson(request(), '{"usage":{"prompt_tokens":5,"completion_tokens":2}}').usage).toEqual({
      prompt_tokens: 5,
      completion_tokens: 2,
      total_tokens: 7,
    });
    // embeddings usage has no completion_tokens
    expect(fromOpenAIJson(request(), '{"usage":{"prompt_tokens":8,"total_tokens":8}}').usage).toEqual({
      prompt_tokens: 8,
      completion_tokens: 0,
      total_tokens: 8,
    });
    expect(fromOpenAIJson(request(), '{"object":"list","data":[]}').usage).toBeUndefined();
  });

  it.each(['<html>Bad gateway</html>', '', '{"truncated":', '"a string"', '42', 'null'])(
    'refuses %j with upstream_invalid_response',
    (text) => {
      const e = thrown(() => fromOpenAIJson(request(), text));
      expect(e.code).toBe('upstream_invalid_response');
      expect(e.status).toBe(502);
    },
  );
});

describe('fromOpenAIError', () => {
  it('keeps status, message, code, type and param of an OpenAI error body', () => {
    const body = JSON.stringify({
      error: { message: 'This model does not exist', type: 'invalid_request_error', param: 'model', code: 'model_not_found' },
    });
    const e = fromOpenAIError(404, body, {});
    expect(e).toBeInstanceOf(GatewayError);
    expect(e.code).toBe('upstream_error');
    expect(e.status).toBe(404);
    expect(e.message).toBe('This model does not exist');
    expect(e.type).toBe('invalid_request_error');
    expect(e.param).toBe('model');
    expect(e.upstreamCode).toBe('model_not_found');
    expect(e.toBody('t-1')).toEqual({
      error: { message: 'This model does not exist', type: 'invalid_request_error', code: 'model_not_found', param: 'model' },
      trace_id: 't-1',
    });
  });

  it('stringifies a numeric code and accepts an error given as a string', () => {
    expect(fromOpenAIError(400, '{"error":{"message":"m","code":1234}}', {}).upstreamCode).toBe('1234');
    const e = fromOpenAIError(429, '{"error":"Too many requests, slow down"}', {});
    expect(e.message).toBe('Too many requests, slow down');
    expect(e.status).toBe(429);
  });

  it('reads an error object that is not wrapped in {error}', () => {
    const e = fromOpenAIError(400, '{"message":"bad things","type":"bad_request"}', {});
    expect(e.message).toBe('bad things');
    expect(e.type).toBe('bad_request');
  });

  it('passes retry-after, retry-after-ms and x-should-retry on, and nothing else', () => {
    const e = fromOpenAIError(429, '{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}', {
      'retry-after': '7',
      'retry-after-ms': ['1500.5', '99'],
      'x-should-retry': 'true',
      'x-request-id': 'req_fake',
      'set-cookie': ['a=b'],
    });
    expect(e.headers).toEqual({ 'retry-after': '7', 'retry-after-ms': '1500.5', 'x-should-retry': 'true' });
  });

  it('uses a non-JSON body (truncated to 500 characters) as the message', () => {
    expect(fromOpenAIError(503, 'Service Unavailable', {}).message).toBe('Service Unavailable');
    const long = 'x'.repeat(2000);
    expect(fromOpenAIError(500, long, {}).message).toHaveLength(500);
  });

  it('says which status the provider answered when the body is empty or JSON without a message', () => {
    expect(fromOpenAIError(500, '', {}).message).toBe('The provider answered 500.');
    expect(fromOpenAIError(500, 'null', {}).message).toBe('null');
    const e = fromOpenAIError(500, '[1,2]', {});
    expect(e.message).toBe('The provider answered 500.');
    expect(e.type).toBe('upstream_error');
    expect(e.upstreamCode).toBeNull();
    expect(e.param).toBeNull();
  });

  it.each([
    [302, 502],
    [200, 502],
    [399, 502],
    [600, 502],
    [0, 502],
    [400, 400],
    [418, 418],
    [599, 599],
  ])('status %i is answered as %i', (status, expected) => {
    expect(fromOpenAIError(status, '{}', {}).status).toBe(expected);
  });
});

// ---------------------------------------------------------------------------------------------
// fromProvider: the stream reducer

function streamRequest(body: Record<string, unknown> = { ...chatBody, stream: true }): ProviderRequest {
  return request({ stream: true, body });
}

/** Run events through the reducer; returns the chunks and the end state. */
function reduce(state: OpenAIStreamState, events: SseEvent[]): { chunks: StreamChunk[]; state: OpenAIStreamState; done: boolean } {
  const chunks: StreamChunk[] = [];
  let done = false;
  for (const ev of events) {
    const step = fromOpenAIStreamEvent(state, ev);
    state = step.state;
    chunks.push(...step.chunks);
    if (step.done) done = true;
  }
  return { chunks, state, done };
}

const chunk = (content: string) =>
  JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }], usage: null });
const usageChunk = JSON.stringify({
  id: 'c1',
  object: 'chat.completion.chunk',
  choices: [],
  usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
});

describe('openAIStreamStart', () => {
  it('hides the usage chunk only when usage was injected and the client asked for none', () => {
    expect(openAIStreamStart(streamRequest(), true).hideUsageChunk).toBe(true);
    expect(openAIStreamStart(streamRequest(), false).hideUsageChunk).toBe(false);
    expect(openAIStreamStart(streamRequest({ ...chatBody, stream_options: { include_usage: true } }), true).hideUsageChunk).toBe(false);
    expect(openAIStreamStart(streamRequest({ ...chatBody, stream_options: null }), true).hideUsageChunk).toBe(true);
  });

  it('goes through the provider built from a descriptor', () => {
    expect(openAICompatible(OPENAI).streamStart(streamRequest())).toEqual({ hideUsageChunk: true, done: false });
    expect(openAICompatible(OPENROUTER).streamStart(streamRequest())).toEqual({ hideUsageChunk: false, done: false });
  });
});

describe('fromOpenAIStreamEvent', () => {
  it('passes chunks through verbatim and ends on [DONE]', () => {
    const r = reduce(openAIStreamStart(streamRequest(), false), [{ data: chunk('Hel') }, { data: chunk('lo') }, { data: '[DONE]' }]);
    expect(r.chunks).toEqual([{ data: chunk('Hel') }, { data: chunk('lo') }]);
    expect(r.done).toBe(true);
    expect(r.state.done).toBe(true);
    expect(openAIStreamEnd(r.state)).toEqual([]);
  });

  it('hides the injected usage chunk but keeps its numbers', () => {
    const r = reduce(openAIStreamStart(streamRequest(), true), [{ data: chunk('a') }, { data: usageChunk }, { data: '[DONE]' }]);
    expect(r.chunks).toEqual([{ data: chunk('a') }, { data: '', usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }]);
  });

  it('shows the usage chunk when the client asked for it', () => {
    const req = streamRequest({ ...chatBody, stream: true, stream_options: { include_usage: true } });
    const r = reduce(openAIStreamStart(req, true), [{ data: usageChunk }, { data: '[DONE]' }]);
    expect(r.chunks).toEqual([{ data: usageChunk, usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }]);
  });

  it('does not hide a chunk that has choices even when it carries usage', () => {
    const both = JSON.stringify({ choices: [{ index: 0, delta: { content: 'x' } }], usage: { prompt_tokens: 1, completion_tokens: 1 } });
    const r = reduce(openAIStreamStart(streamRequest(), true), [{ data: both }]);
    expect(r.chunks).toEqual([{ data: both, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }]);
  });

  it('turns a data object with an error key into a GatewayError with the provider message', () => {
    const state = openAIStreamStart(streamRequest(), false);
    const e = thrown(() =>
      fromOpenAIStreamEvent(state, { data: '{"error":{"message":"The server had an error","type":"server_error","code":"overloaded"}}' }),
    );
    expect(e.code).toBe('upstream_error');
    expect(e.status).toBe(502);
    expect(e.message).toBe('The server had an error');
    expect(e.upstreamCode).toBe('overloaded');
  });

  it('ignores a falsy error key (error: null is not an error)', () => {
    const data = JSON.stringify({ choices: [{ index: 0, delta: { content: 'ok' } }], error: null });
    expect(reduce(openAIStreamStart(streamRequest(), false), [{ data }]).chunks).toEqual([{ data }]);
  });

  it('turns an `event: error` into an error, JSON or not', () => {
    const state = openAIStreamStart(streamRequest(), false);
    const a = thrown(() => fromOpenAIStreamEvent(state, { event: 'error', data: '{"message":"quota gone","code":"insufficient_quota"}' }));
    expect(a.code).toBe('upstream_error');
    expect(a.message).toBe('quota gone');
    expect(a.upstreamCode).toBe('insufficient_quota');
    const b = thrown(() => fromOpenAIStreamEvent(state, { event: 'error', data: 'upstream exploded' }));
    expect(b.code).toBe('upstream_error');
    expect(b.message).toBe('upstream exploded');
  });

  it.each(['{"choices":[', 'not json', '', 'null', '"text"'])('refuses data %j as upstream_invalid_response', (data) => {
    const e = thrown(() => fromOpenAIStreamEvent(openAIStreamStart(streamRequest(), false), { data }));
    expect(e.code).toBe('upstream_invalid_response');
  });

  it('is pure: the input state is not mutated', () => {
    const state = openAIStreamStart(streamRequest(), true);
    const snapshot = { ...state };
    fromOpenAIStreamEvent(state, { data: '[DONE]' });
    fromOpenAIStreamEvent(state, { data: usageChunk });
    expect(state).toEqual(snapshot);
  });
});

describe('openAIStreamEnd', () => {
  it('throws stream_interrupted when the stream ended without [DONE]', () => {
    const r = reduce(openAIStreamStart(streamRequest(), false), [{ data: chunk('a') }]);
    const e = thrown(() => openAIStreamEnd(r.state));
    expect(e.code).toBe('stream_interrupted');
    expect(e.status).toBe(502);
  });
});

// ---------------------------------------------------------------------------------------------
// Registry

describe('ProviderRegistry', () => {
  const reg = new ProviderRegistry(defaultProviders());

  it.each([
    ['openai', 'openai'],
    ['@openai', 'openai'],
    ['OpenAI', 'openai'],
    ['@OPENAI', 'openai'],
    ['vllm', 'vllm'],
    ['ollama', 'ollama'],
    ['custom', 'openai-compatible'],
    ['together-ai', 'together'],
    ['@fireworks-ai', 'fireworks'],
    ['Groq', 'groq'],
  ])('%s → %s', (name, id) => {
    expect(reg.get(name).descriptor.id).toBe(id);
    expect(reg.find(name)?.descriptor.id).toBe(id);
  });

  it('lists each provider once, by id', () => {
    const ids = reg.ids();
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(defaultProviders().map((p) => p.descriptor.id));
    // The native providers (their own tests) follow the OpenAI-compatible entries.
    expect(ids.slice(0, OPENAI_COMPATIBLE.length)).toEqual(OPENAI_COMPATIBLE.map((d) => d.id));
  });

  it('answers an unknown provider with unknown_provider naming the param', () => {
    expect(reg.find('nope')).toBeUndefined();
    const e = thrown(() => reg.get('nope', 'config.targets[1].provider'));
    expect(e.code).toBe('unknown_provider');
    expect(e.status).toBe(400);
    expect(e.param).toBe('config.targets[1].provider');
    expect(e.message).toContain('nope');
    expect(thrown(() => reg.get('@')).param).toBe('provider');
  });

  it('refuses provider_base_urls naming an unknown provider', () => {
    expect(() => new ProviderRegistry(defaultProviders(), { nope: 'http://proxy.example/v1' })).toThrow(/unknown provider: nope/);
  });

  it('resolves the base URL: custom_host > operator override > default', () => {
    const over = new ProviderRegistry(defaultProviders(), { openai: 'http://proxy.example/v1' });
    const openai = over.get('openai');
    expect(reg.baseUrl(openai, { provider: 'openai' })).toBe('https://api.openai.com/v1');
    expect(over.baseUrl(openai, { provider: 'openai' })).toBe('http://proxy.example/v1');
    expect(over.baseUrl(openai, { provider: 'openai', custom_host: 'https://llm.example.com/v1' })).toBe('https://llm.example.com/v1');
    // An override for one provider does not touch another.
    expect(over.baseUrl(over.get('groq'), { provider: 'groq' })).toBe('https://api.groq.com/openai/v1');
  });

  it('applies an override given under an alias or another spelling to the provider', () => {
    const over = new ProviderRegistry(defaultProviders(), { custom: 'http://vllm.example/v1', '@OpenAI': 'http://proxy.example/v1' });
    expect(over.baseUrl(over.get('openai-compatible'), { provider: 'openai-compatible' })).toBe('http://vllm.example/v1');
    expect(over.baseUrl(over.get('openai'), { provider: 'openai' })).toBe('http://proxy.example/v1');
  });

  it('requires custom_host for a provider without a default base URL', () => {
    const p = reg.get('openai-compatible');
    const e = thrown(() => reg.baseUrl(p, { provider: 'openai-compatible' }));
    expect(e.code).toBe('invalid_config');
    expect(e.param).toBe('custom_host');
    expect(reg.baseUrl(p, { provider: 'openai-compatible', custom_host: 'http://gpu.example:8000/v1' })).toBe('http://gpu.example:8000/v1');
  });
});
