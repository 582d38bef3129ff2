/**
 * Vertex AI Gemini translation, both ways, on fixtures written from Google's API reference (the Gemini wire
 * shapes come from test/fakes/vertex-server.ts helpers, not from the translator).
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { vertexAI } from '../../src/providers/vertex-ai/index.js';
import { ProviderRegistry, defaultProviders } from '../../src/providers/registry.js';
import type { ProviderRequest, StreamChunk, StreamEvent, Target } from '../../src/providers/types.js';
import { createSseDecoder } from '../../src/upstream/sse-decode.js';
import { geminiResponse, geminiSse, googleError } from '../fakes/vertex-server.js';
import { splitInsideUtf8 } from '../fakes/openai-server.js';
import { thrownBy } from '../helpers/throws.js';

const provider = vertexAI();
const registry = new ProviderRegistry(defaultProviders());
const thrown = (fn: () => unknown): GatewayError => thrownBy(GatewayError, fn);

const target = (extra: Record<string, unknown> = {}, over: Partial<Target> = {}): Target => ({
  provider: 'vertex-ai',
  api_key: 'ya29.plain-token',
  extra: { cloud_c_region: 'us-central1', cloud_c_project_id: 'my-proj', ...extra },
  ...over,
});

function request(body: Record<string, unknown>, stream = false): ProviderRequest {
  return { endpoint: 'chat', body: { model: 'gemini-2.5-flash', ...body }, stream, headers: {} };
}

function upstream(body: Record<string, unknown>, t: Target = target(), stream = false) {
  const p = registry.get('vertex-ai');
  return p.toProvider(request(body, stream), t, registry.baseUrl(p, t));
}
const sent = (body: Record<string, unknown>): any => JSON.parse(upstream(body).body!);

// ---------------------------------------------------------------------------------------------
describe('vertex-ai: the request', () => {
  it('is known as vertex-ai and @vertex; it accepts a key, custom_host and the cloud_c fields only', () => {
    const d = registry.get('@vertex').descriptor;
    expect(d.id).toBe('vertex-ai');
    expect(d.fields.groups).toEqual(['api_key', 'custom_host', 'cloud_c']);
    expect(d.fields.schema.safeParse({ cloud_c_region: 'r', cloud_c_service_account_json: {} }).success).toBe(true);
    expect(d.fields.schema.safeParse({ cloud_b_region: 'us-east-1' }).success).toBe(false);
  });

  it('goes to the regional host, the project and model in the path, the token as Bearer', () => {
    const u = upstream({ messages: [{ role: 'user', content: 'hi' }] });
    expect(u.origin).toBe('https://us-central1-aiplatform.googleapis.com');
    expect(u.path).toBe('/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(u.headers.authorization).toBe('Bearer ya29.plain-token');
    const s = upstream({ messages: [{ role: 'user', content: 'hi' }] }, target(), true);
    expect(s.path).toBe('/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(s.headers.accept).toBe('text/event-stream');
  });

  it('uses the hosts of global and the us/eu multi-regions', () => {
    const m = { messages: [{ role: 'user', content: 'hi' }] };
    expect(upstream(m, target({ cloud_c_region: 'global' })).origin).toBe('https://aiplatform.googleapis.com');
    expect(upstream(m, target({ cloud_c_region: 'eu' })).origin).toBe('https://aiplatform.eu.rep.googleapis.com');
  });

  it('composes custom_host as the default base: {custom_host}/v1/projects/…:generateContent, guarded', () => {
    const u = upstream({ messages: [{ role: 'user', content: 'hi' }] }, target({}, { custom_host: 'https://proxy.internal:8443/vertex/' }));
    expect(u.origin).toBe('https://proxy.internal:8443');
    expect(u.path).toBe('/vertex/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent');
  });

  it('fills {region} in an operator base-URL override', () => {
    const reg = new ProviderRegistry(defaultProviders(), { 'vertex-ai': 'https://{region}-vertex.example.net' });
    const p = reg.get('vertex-ai');
    const u = p.toProvider(request({ messages: [{ role: 'user', content: 'hi' }] }), target(), reg.baseUrl(p, target()));
    expect(u.origin).toBe('https://us-central1-vertex.example.net');
  });

  it('refuses a region that is not a plain name (it names a host), naming cloud_c_region', () => {
    const e = thrown(() => upstream({ messages: [] }, target({ cloud_c_region: 'evil.com/x#' })));
    expect([e.status, e.param]).toEqual([400, 'cloud_c_region']);
  });

  it('takes the project from the service account when cloud_c_project_id is absent; none is a 400 naming it', () => {
    const sa = { client_email: 'a@b.c', private_key: 'x', project_id: 'sa-proj' };
    const u = upstream({ messages: [{ role: 'user', content: 'hi' }] }, target({ cloud_c_project_id: undefined, cloud_c_service_account_json: sa }));
    expect(u.path).toContain('/projects/sa-proj/');
    // The token comes from prepare, not from api_key.
    expect(u.headers.authorization).toBeUndefined();
    const e = thrown(() => upstream({ messages: [{ role: 'user', content: 'hi' }] }, target({ cloud_c_project_id: undefined })));
    expect([e.status, e.param]).toEqual([400, 'cloud_c_project_id']);
  });

  it('passes the headers forward_headers names, never a credential or the gateway\'s own', () => {
    const p = registry.get('vertex-ai');
    const req: ProviderRequest = {
      ...request({ messages: [{ role: 'user', content: 'hi' }] }),
      headers: { 'x-goog-user-project': 'billing-proj', authorization: 'Bearer client', 'x-gateway-api-key': 'gw' },
      forwardHeaders: ['X-Goog-User-Project', 'authorization', 'x-gateway-api-key'],
    };
    const u = p.toProvider(req, target(), registry.baseUrl(p, target()));
    expect(u.headers['X-Goog-User-Project']).toBe('billing-proj');
    expect(u.headers.authorization).toBe('Bearer ya29.plain-token');
    expect(u.headers['x-gateway-api-key']).toBeUndefined();
  });

  it('answers completions and embeddings with a 400 naming the provider and the endpoint', () => {
    const e = thrown(() => provider.toProvider({ endpoint: 'embeddings', body: {}, stream: false, headers: {} }, target(), 'x'));
    expect(e.code).toBe('unsupported_endpoint');
    expect(e.message).toContain('vertex-ai');
    expect(e.message).toContain('embeddings');
  });

  it('lists models from the publisher model list', () => {
    const p = registry.get('vertex-ai');
    const u = p.toProvider({ endpoint: 'models', body: undefined, stream: false, headers: {} }, target(), registry.baseUrl(p, target()));
    expect([u.method, u.path]).toEqual(['GET', '/v1beta1/publishers/google/models']);
    const r = p.fromJson({ endpoint: 'models', body: undefined, stream: false, headers: {} }, JSON.stringify({ publisherModels: [{ name: 'publishers/google/models/gemini-2.5-pro' }] }));
    expect(r.body).toEqual({ object: 'list', data: [{ id: 'gemini-2.5-pro', object: 'model', created: 0, owned_by: 'google' }] });
  });

  it('puts system and developer messages in systemInstruction; user/model turns; consecutive turns merged', () => {
    const b = sent({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'a' },
        { role: 'user', content: [{ type: 'text', text: 'b' }] },
        { role: 'assistant', content: 'c' },
        { role: 'user', content: 'd' },
      ],
    });
    expect(b.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] });
    expect(b.contents).toEqual([
      { role: 'user', parts: [{ text: 'a' }, { text: 'b' }] },
      { role: 'model', parts: [{ text: 'c' }] },
      { role: 'user', parts: [{ text: 'd' }] },
    ]);
  });

  it('maps the sampling fields to generationConfig', () => {
    const b = sent({
      messages: [{ role: 'user', content: 'x' }],
      max_completion_tokens: 100,
      temperature: 0.3,
      top_p: 0.9,
      stop: 'END',
      n: 2,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      seed: 7,
      logprobs: true,
      top_logprobs: 3,
      reasoning_effort: 'low',
      user: 'dropped',
      parallel_tool_calls: true,
    });
    expect(b.generationConfig).toEqual({
      maxOutputTokens: 100,
      temperature: 0.3,
      topP: 0.9,
      stopSequences: ['END'],
      candidateCount: 2,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      seed: 7,
      responseLogprobs: true,
      logprobs: 3,
      thinkingConfig: { thinkingBudget: 1024 },
    });
    expect(sent({ messages: [{ role: 'user', content: 'x' }], max_tokens: 5 }).generationConfig).toEqual({ maxOutputTokens: 5 });
  });

  it('maps response_format json_object and json_schema (responseJsonSchema, the JSON Schema as given)', () => {
    const m = [{ role: 'user', content: 'x' }];
    expect(sent({ messages: m, response_format: { type: 'json_object' } }).generationConfig).toEqual({ responseMimeType: 'application/json' });
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    expect(sent({ messages: m, response_format: { type: 'json_schema', json_schema: { name: 's', schema, strict: true } } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
  });

  it('refuses a field with no Gemini counterpart, naming it (never silently dropped)', () => {
    const e = thrown(() => sent({ messages: [{ role: 'user', content: 'x' }], logit_bias: { '1': 5 } }));
    expect([e.status, e.code, e.param]).toEqual([400, 'invalid_request_body', 'logit_bias']);
  });

  it('translates tools and every tool_choice form', () => {
    const tools = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      { type: 'function', function: { name: 'get_time' } },
    ];
    const m = [{ role: 'user', content: 'x' }];
    const b = sent({ messages: m, tools });
    expect(b.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } },
          { name: 'get_time' },
        ],
      },
    ]);
    expect(b.toolConfig).toBeUndefined();
    const fcc = (tool_choice: unknown): any => sent({ messages: m, tools, tool_choice }).toolConfig.functionCallingConfig;
    expect(fcc('auto')).toEqual({ mode: 'AUTO' });
    expect(fcc('none')).toEqual({ mode: 'NONE' });
    expect(fcc('required')).toEqual({ mode: 'ANY' });
    expect(fcc({ type: 'function', function: { name: 'get_time' } })).toEqual({ mode: 'ANY', allowedFunctionNames: ['get_time'] });
    const allowed = (mode: string) => ({ type: 'allowed_tools', allowed_tools: { mode, tools: [{ type: 'function', function: { name: 'get_time' } }] } });
    expect(fcc(allowed('required'))).toEqual({ mode: 'ANY', allowedFunctionNames: ['get_time'] });
    const auto = sent({ messages: m, tools, tool_choice: allowed('auto') });
    expect(auto.toolConfig.functionCallingConfig).toEqual({ mode: 'AUTO' });
    expect(auto.tools[0].functionDeclarations.map((d: any) => d.name)).toEqual(['get_time']);
  });

  it('turns assistant tool_calls into functionCall parts and tool messages into functionResponse parts of a user turn', () => {
    const b = sent({
      messages: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '18°C' },
        { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'text', text: '21°C' }] },
      ],
    });
    expect(b.contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
          { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { content: '18°C' } } },
          { functionResponse: { name: 'get_weather', response: { content: '21°C' } } },
        ],
      },
    ]);
  });

  it('refuses a tool message whose tool_call_id no assistant made, and arguments that are not a JSON object', () => {
    expect(thrown(() => sent({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nope', content: 'r' }] })).param).toBe('messages[1].tool_call_id');
    const e = thrown(() =>
      sent({ messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1' } }] }] }),
    );
    expect(e.param).toBe('messages[0].tool_calls[0].function.arguments');
  });

  it('sends images: a data URL inline, an https or gs URL as fileData', () => {
    const b = sent({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'gs://bucket/cat.webp', detail: 'high' } },
          ],
        },
      ],
    });
    expect(b.contents[0].parts).toEqual([
      { text: 'what is this?' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { mimeType: 'image/webp', fileUri: 'gs://bucket/cat.webp' } },
    ]);
    expect(thrown(() => sent({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x' } }] }] })).param).toBe(
      'messages[0].content[0].image_url.url',
    );
  });
});

// ---------------------------------------------------------------------------------------------
describe('vertex-ai: the answer', () => {
  const req = request({ messages: [{ role: 'user', content: 'x' }] });
  const json = (r: unknown): any => provider.fromJson(req, JSON.stringify(r));

  it('maps candidates to choices and usageMetadata to usage (thoughts in completion and reasoning_tokens, cached inside prompt)', () => {
    const usage = { promptTokenCount: 10, candidatesTokenCount: 4, thoughtsTokenCount: 6, cachedContentTokenCount: 8, totalTokenCount: 20 };
    const r = json(geminiResponse([{ text: 'thinking…', thought: true }, { text: 'Hello' }, { text: ' there' }], 'STOP', usage));
    expect(r.body).toMatchObject({
      id: 'chatcmpl-resp-fake-1',
      object: 'chat.completion',
      created: 1735689600,
      model: 'gemini-2.5-flash',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop', logprobs: null }],
    });
    const expected = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20, prompt_tokens_details: { cached_tokens: 8 }, completion_tokens_details: { reasoning_tokens: 6 } };
    expect(r.body.usage).toEqual(expected);
    expect(r.usage).toEqual(expected);
  });

  it('a functionCall gives tool_calls (arguments a JSON string, a stable id) even when Gemini says STOP; empty content is null', () => {
    const r = json(geminiResponse([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }], 'STOP'));
    const choice = r.body.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([{ id: 'call_resp-fake-1_0_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    expect(json(geminiResponse([{ functionCall: { name: 'f', args: {} } }], 'STOP')).body.choices[0].message.tool_calls[0].id).toBe(choice.message.tool_calls[0].id);
  });

  it.each([
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['BLOCKLIST', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['SPII', 'content_filter'],
    ['MAX_TOKENS', 'length'],
    ['MALFORMED_FUNCTION_CALL', 'stop'],
    ['OTHER', 'stop'],
  ])('finishReason %s → %s', (reason, expected) => {
    expect(json(geminiResponse([{ text: 'x' }], reason)).body.choices[0].finish_reason).toBe(expected);
  });

  it('a blocked prompt (no candidates, promptFeedback.blockReason) is content_filter with empty content', () => {
    const r = json({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 }, responseId: 'r' });
    expect(r.body.choices).toEqual([{ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' }]);
  });

  it('n candidates become n choices', () => {
    const r = json({
      candidates: [
        { index: 0, content: { role: 'model', parts: [{ text: 'a' }] }, finishReason: 'STOP' },
        { index: 1, content: { role: 'model', parts: [{ text: 'b' }] }, finishReason: 'MAX_TOKENS' },
      ],
    });
    expect(r.body.choices.map((c: any) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'a', 'stop'],
      [1, 'b', 'length'],
    ]);
  });

  it('Google errors keep their status and message; 429 RESOURCE_EXHAUSTED carries Retry-After from RetryInfo', () => {
    const s = googleError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute', [
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '13.5s' },
    ]);
    const e = provider.fromError(429, JSON.stringify(s.json), {});
    expect([e.status, e.upstreamCode, e.type, e.message]).toEqual([429, 'RESOURCE_EXHAUSTED', 'rate_limit_exceeded', 'Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute']);
    expect(e.headers).toEqual({ 'retry-after': '14' });
    const e404 = provider.fromError(404, JSON.stringify(googleError(404, 'NOT_FOUND', 'Publisher model not found').json), { 'retry-after': '2' });
    expect([e404.status, e404.upstreamCode, e404.message, e404.headers]).toEqual([404, 'NOT_FOUND', 'Publisher model not found', { 'retry-after': '2' }]);
    expect(provider.fromError(503, 'upstream connect error', {}).message).toBe('upstream connect error');
  });
});

// ---------------------------------------------------------------------------------------------
describe('vertex-ai: streams', () => {
  /** Bytes through the gateway's own SSE decoder, then the reducer, then streamEnd. */
  function run(bytes: (string | Buffer)[], body: Record<string, unknown> = {}): { chunks: StreamChunk[]; json: any[] } {
    const req = request({ messages: [{ role: 'user', content: 'x' }], ...body }, true);
    const events: StreamEvent[] = [];
    const dec = createSseDecoder((e) => events.push(e));
    for (const b of bytes) dec.write(typeof b === 'string' ? Buffer.from(b) : b);
    dec.end();
    let state = provider.streamStart(req);
    const chunks: StreamChunk[] = [];
    for (const e of events) {
      const step = provider.fromStreamEvent(state, e);
      state = step.state;
      chunks.push(...step.chunks);
    }
    chunks.push(...provider.streamEnd(state));
    return { chunks, json: chunks.filter((c) => c.data !== '').map((c) => JSON.parse(c.data)) };
  }
  const content = (json: any[]): string => json.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  const usage = { promptTokenCount: 3, candidatesTokenCount: 5, totalTokenCount: 8 };

  it('role first, text deltas, the finish chunk; the last usageMetadata counts, hidden unless include_usage', () => {
    const frames = geminiSse([
      geminiResponse([{ text: 'Hel' }], undefined, { promptTokenCount: 3, totalTokenCount: 3 }),
      geminiResponse([{ text: 'lo' }]),
      geminiResponse([{ text: '!' }], 'STOP', usage),
    ]);
    const { chunks, json } = run(frames);
    expect(json[0].choices[0].delta).toEqual({ role: 'assistant', content: 'Hel' });
    expect(json.every((c) => c.object === 'chat.completion.chunk' && c.id === 'chatcmpl-resp-fake-1')).toBe(true);
    expect(content(json)).toBe('Hello!');
    expect(json.at(-1).choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
    expect(chunks.at(-1)).toEqual({ data: '', usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } });

    const withUsage = run(frames, { stream_options: { include_usage: true } }).json.at(-1);
    expect(withUsage.choices).toEqual([]);
    expect(withUsage.usage).toEqual({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
  });

  it('survives UTF-8 split inside characters, CRLF and ping comments', () => {
    const frames = geminiSse(
      [geminiResponse([{ text: 'wörld ✓ ' }]), geminiResponse([{ text: '𝄞 done' }], 'STOP', usage)],
      { crlf: true, comments: true },
    );
    const { json } = run(splitInsideUtf8(frames));
    expect(content(json)).toBe('wörld ✓ 𝄞 done');
  });

  it('a tool call arrives whole: one tool_calls delta with index, id, name and the full arguments; finish tool_calls', () => {
    const frames = geminiSse([
      geminiResponse([{ text: '' }]),
      geminiResponse([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }], 'STOP', usage),
    ]);
    const { json } = run(frames);
    const calls = json.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: 'call_resp-fake-1_0_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { index: 1, id: 'call_resp-fake-1_0_1', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ]);
    expect(json.at(-1).choices[0].finish_reason).toBe('tool_calls');
    expect(content(json)).toBe('');
  });

  it('an error object mid-stream is an error, never a clean end', () => {
    const frames = [...geminiSse([geminiResponse([{ text: 'partial' }])]), `data: ${JSON.stringify(googleError(500, 'INTERNAL', 'Internal error encountered.').json)}\n\n`];
    const e = thrown(() => run(frames));
    expect([e.code, e.status, e.message, e.upstreamCode]).toEqual(['upstream_error', 500, 'Internal error encountered.', 'INTERNAL']);
  });

  it('a body that ends before any finishReason was cut: stream_interrupted', () => {
    const e = thrown(() => run(geminiSse([geminiResponse([{ text: 'partial' }])])));
    expect(e.code).toBe('stream_interrupted');
  });

  it('a safety finish mid-answer is content_filter', () => {
    const { json } = run(geminiSse([geminiResponse([{ text: 'so' }]), geminiResponse([], 'SAFETY', usage)]));
    expect(json.at(-1).choices[0].finish_reason).toBe('content_filter');
  });
});
