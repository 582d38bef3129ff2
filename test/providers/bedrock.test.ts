import { describe, expect, it } from 'vitest';
import { bedrock } from '../../src/providers/bedrock/index.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import type { ProviderRequest, StreamChunk, Target } from '../../src/providers/types.js';

const p = bedrock();
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const KEYS: Target = {
  provider: 'bedrock',
  extra: { cloud_b_access_key_id: 'AKIDEXAMPLE', cloud_b_secret_access_key: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', cloud_b_region: 'eu-west-1' },
};
const chat = (body: Record<string, unknown>, stream = false): ProviderRequest => ({
  endpoint: 'chat',
  body: { model: MODEL, ...body, ...(stream ? { stream: true } : {}) },
  stream,
  headers: {},
});
const user = (content: unknown) => ({ role: 'user', content });
const build = (body: Record<string, unknown>, target: Target = KEYS, stream = false) =>
  p.toProvider(chat(body, stream), target, p.descriptor.baseUrl!);
const converse = (body: Record<string, unknown>) => JSON.parse(build(body).body!);
const refusal = (f: () => unknown): GatewayError => {
  try {
    f();
  } catch (e) {
    return e as GatewayError;
  }
  throw new Error('did not throw');
};

describe('bedrock toProvider: URL and credentials', () => {
  it('composes the regional runtime host and encodes the model id as one path segment', () => {
    const r = build({ messages: [user('hi')] });
    expect(r.origin).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com');
    expect(r.path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    expect(r.headers.host).toBe('bedrock-runtime.eu-west-1.amazonaws.com');
    expect(r.headers.authorization).toBeUndefined(); // signed in prepare
  });

  it('streams go to converse-stream and accept the event stream', () => {
    const r = build({ messages: [user('hi')] }, KEYS, true);
    expect(r.path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
    expect(r.headers.accept).toBe('application/vnd.amazon.eventstream');
    expect(r.stream).toBe(true);
  });

  it('custom_host is the base URL: {custom_host}/model/{id}/converse, path prefix kept', () => {
    const t = { ...KEYS, custom_host: 'https://proxy.internal:8443/aws/' };
    const r = p.toProvider(chat({ messages: [user('hi')] }), t, t.custom_host);
    expect(r.origin).toBe('https://proxy.internal:8443');
    expect(r.path).toBe('/aws/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    expect(r.headers.host).toBe('proxy.internal:8443');
  });

  it('the region defaults to us-east-1; an API key (no key pair) is Authorization: Bearer', () => {
    const r = build({ messages: [user('hi')] }, { provider: 'bedrock', api_key: 'ABSK-key' });
    expect(r.origin).toBe('https://bedrock-runtime.us-east-1.amazonaws.com');
    expect(r.headers.authorization).toBe('Bearer ABSK-key');
  });

  it('models go to the control plane host; completions and embeddings are refused naming provider and endpoint', () => {
    const m = p.toProvider({ endpoint: 'models', body: undefined, stream: false, headers: {} }, KEYS, p.descriptor.baseUrl!);
    expect(`${m.origin}${m.path}`).toBe('https://bedrock.eu-west-1.amazonaws.com/foundation-models');
    expect(m.method).toBe('GET');
    const e = refusal(() => p.toProvider({ endpoint: 'embeddings', body: { model: 'x', input: 'y' }, stream: false, headers: {} }, KEYS, p.descriptor.baseUrl!));
    expect(e.code).toBe('unsupported_endpoint');
    expect(e.message).toMatch(/bedrock.*embeddings/);
  });

  it('forward_headers pass, but never x-amz-* or credentials', () => {
    const req = { ...chat({ messages: [user('hi')] }), forwardHeaders: ['x-team', 'x-amz-date', 'authorization'], headers: { 'x-team': 'a', 'x-amz-date': 'b', authorization: 'c' } };
    const r = p.toProvider(req, KEYS, p.descriptor.baseUrl!);
    expect(r.headers['x-team']).toBe('a');
    expect(r.headers['x-amz-date']).toBeUndefined();
    expect(r.headers.authorization).toBeUndefined();
  });
});

describe('bedrock prepare: SigV4 with the clock handed in', () => {
  const now = () => Date.UTC(2024, 5, 20, 12, 30, 45);
  const ctx = { now, signal: new AbortController().signal };

  it('is deterministic for a given clock and covers host, date and the session token', async () => {
    const t: Target = { ...KEYS, extra: { ...KEYS.extra, cloud_b_session_token: 'SESSION' } };
    const r = build({ messages: [user('hi')] }, t);
    const a = await p.prepare!(r, t, ctx);
    const b = await p.prepare!(r, t, ctx);
    expect(a.headers.authorization).toBe(b.headers.authorization);
    expect(a.headers['x-amz-date']).toBe('20240620T123045Z');
    expect(a.headers['x-amz-security-token']).toBe('SESSION');
    expect(a.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20240620\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]*host;[a-z0-9;-]*x-amz-security-token, Signature=[0-9a-f]{64}$/,
    );
    expect(r.headers.authorization).toBeUndefined(); // the built request is not mutated
    const later = await p.prepare!(r, t, { ...ctx, now: () => now() + 1000 });
    expect(later.headers.authorization).not.toBe(a.headers.authorization);
  });

  it('leaves an API-key request as built', async () => {
    const t: Target = { provider: 'bedrock', api_key: 'k' };
    const r = build({ messages: [user('hi')] }, t);
    expect(await p.prepare!(r, t, ctx)).toBe(r);
  });
});

describe('bedrock toProvider: the Converse body', () => {
  it('system and developer → system[]; user turns with text and a data-URL image; inferenceConfig', () => {
    expect(
      converse({
        messages: [
          { role: 'system', content: 'S1' },
          { role: 'developer', content: [{ type: 'text', text: 'S2' }] },
          user([{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/jpg;base64,AAAA' } }]),
        ],
        max_completion_tokens: 100,
        max_tokens: 5,
        temperature: 0.5,
        top_p: 0.9,
        stop: 'END',
      }),
    ).toEqual({
      system: [{ text: 'S1' }, { text: 'S2' }],
      messages: [{ role: 'user', content: [{ text: 'look' }, { image: { format: 'jpeg', source: { bytes: 'AAAA' } } }] }],
      inferenceConfig: { maxTokens: 100, temperature: 0.5, topP: 0.9, stopSequences: ['END'] },
    });
  });

  it('assistant tool_calls with empty content → toolUse only; consecutive tool messages → one user turn', () => {
    const body = converse({
      messages: [
        user('both'),
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
            { id: 'c2', type: 'function', function: { name: 'b', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'r1' },
        { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'r2' }] },
      ],
      tools: [{ type: 'function', function: { name: 'a', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'a' } },
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'both' }] },
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 'c1', name: 'a', input: { x: 1 } } },
          { toolUse: { toolUseId: 'c2', name: 'b', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'c1', content: [{ text: 'r1' }] } },
          { toolResult: { toolUseId: 'c2', content: [{ text: 'r2' }] } },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'a', inputSchema: { json: { type: 'object' } } } }], toolChoice: { tool: { name: 'a' } } });
  });

  it('tool_choice none drops the tools, but tool blocks in the history keep a bare toolConfig', () => {
    const tools = [{ type: 'function', function: { name: 'a' } }];
    expect(converse({ messages: [user('x')], tools, tool_choice: 'none' }).toolConfig).toBeUndefined();
    const withHistory = converse({
      messages: [user('x'), { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'a', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c', content: 'ok' }],
      tools,
      tool_choice: 'none',
    });
    expect(withHistory.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'a', inputSchema: { json: { type: 'object' } } } }] });
    expect(converse({ messages: [user('x')], tools, tool_choice: 'auto' }).toolConfig.toolChoice).toEqual({ auto: {} });
    expect(converse({ messages: [user('x')], tools }).toolConfig.toolChoice).toBeUndefined();
  });

  it('fields that are not OpenAI’s go to additionalModelRequestFields; Converse’s own pass through; bookkeeping is dropped', () => {
    const body = converse({ messages: [user('x')], top_k: 5, thinking: { type: 'enabled' }, guardrailConfig: { guardrailIdentifier: 'g', guardrailVersion: '1' }, user: 'u1', metadata: { a: 'b' }, n: 1 });
    expect(body.additionalModelRequestFields).toEqual({ top_k: 5, thinking: { type: 'enabled' } });
    expect(body.guardrailConfig).toEqual({ guardrailIdentifier: 'g', guardrailVersion: '1' });
    expect(body.user).toBeUndefined();
    expect(body.metadata).toBeUndefined();
  });

  it.each([
    [{ n: 2 }, 'n'],
    [{ logprobs: true }, 'logprobs'],
    [{ seed: 1 }, 'seed'],
    [{ response_format: { type: 'json_object' } }, 'response_format'],
    [{ frequency_penalty: 0.5 }, 'frequency_penalty'],
    [{ messages: [user([{ type: 'image_url', image_url: { url: 'https://x/y.png' } }])] }, 'messages[0].content[0].image_url.url'],
    [{ messages: [user([{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }])] }, 'messages[0].content[0]'],
    [{ messages: [user('x'), { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'a', arguments: '{bad' } }] }] }, 'messages[1].tool_calls[0].function.arguments'],
    [{ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role'],
    [{ tools: [{ type: 'custom', custom: { name: 'x' } }] }, 'tools[0]'],
  ])('refuses %j with a 400 naming %s', (extra, param) => {
    const e = refusal(() => build({ messages: [user('x')], ...extra }));
    expect(e.code).toBe('invalid_request_body');
    expect(e.status).toBe(400);
    expect(e.param).toBe(param);
  });
});

describe('bedrock fromJson', () => {
  const req = chat({ messages: [user('x')] });
  it('text and toolUse blocks, stopReason and usage with cache tokens', () => {
    const r = p.fromJson(
      req,
      JSON.stringify({
        output: { message: { role: 'assistant', content: [{ text: 'Let me ' }, { text: 'check.' }, { reasoningContent: { reasoningText: { text: 'hmm' } } }, { toolUse: { toolUseId: 't1', name: 'f', input: { q: 'ü' } } }] } },
        stopReason: 'tool_use',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 27, cacheReadInputTokens: 8, cacheWriteInputTokens: 4 },
        metrics: { latencyMs: 3 },
      }),
    );
    const body = r.body as any;
    expect(body.object).toBe('chat.completion');
    expect(body.model).toBe(MODEL);
    expect(body.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: 'Let me check.', refusal: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"q":"ü"}' } }] },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
    expect(r.usage).toEqual({ prompt_tokens: 22, completion_tokens: 5, total_tokens: 27, prompt_tokens_details: { cached_tokens: 8, cache_write_tokens: 4 } });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['content_filtered', 'content_filter'],
    ['guardrail_intervened', 'content_filter'],
    ['malformed_tool_use', 'stop'],
  ])('stopReason %s → %s', (stop, finish) => {
    const r = p.fromJson(req, JSON.stringify({ output: { message: { content: [{ text: 'x' }] } }, stopReason: stop }));
    expect((r.body as any).choices[0].finish_reason).toBe(finish);
  });

  it('a body that is not JSON is upstream_invalid_response', () => {
    expect(refusal(() => p.fromJson(req, '<html>')).code).toBe('upstream_invalid_response');
  });
});

describe('bedrock fromError (restJson1)', () => {
  it.each([
    [429, 'ThrottlingException:http://internal', 429, 'rate_limit_exceeded'],
    [400, 'ValidationException', 400, 'invalid_request_error'],
    [403, 'AccessDeniedException', 403, 'permission_error'],
    [429, 'ModelNotReadyException', 503, 'server_error'],
    [503, 'ServiceUnavailableException', 503, 'server_error'],
    [424, 'ModelErrorException', 502, 'server_error'],
  ])('HTTP %i with x-amzn-errortype %s → %i %s', (status, type, want, wantType) => {
    const e = p.fromError(status, '{"message":"the provider said so"}', { 'x-amzn-errortype': type });
    expect(e.status).toBe(want);
    expect(e.type).toBe(wantType);
    expect(e.message).toBe('the provider said so');
    expect(e.upstreamCode).toBe(type.split(':')[0]);
  });

  it('reads the type from the body __type and the message from Message; keeps retry-after', () => {
    const e = p.fromError(400, '{"__type":"com.amazon.coral.validate#ValidationException","Message":"bad"}', { 'retry-after': '2' });
    expect(e.upstreamCode).toBe('ValidationException');
    expect(e.message).toBe('bad');
    expect(e.headers).toEqual({ 'retry-after': '2' });
  });
});

describe('bedrock stream reducer', () => {
  const run = (events: { event: string; data: unknown }[], includeUsage = false) => {
    const req = chat({ messages: [user('x')], ...(includeUsage ? { stream_options: { include_usage: true } } : {}) }, true);
    let state = p.streamStart(req);
    const chunks: StreamChunk[] = [];
    let done = false;
    for (const e of events) {
      const s = p.fromStreamEvent(state, { event: e.event, data: typeof e.data === 'string' ? e.data : JSON.stringify(e.data) });
      state = s.state;
      chunks.push(...s.chunks);
      done ||= s.done === true;
    }
    chunks.push(...p.streamEnd(state));
    return { chunks, parsed: chunks.filter((c) => c.data !== '').map((c) => JSON.parse(c.data)), done };
  };

  it('role, text, two tool calls with their own indexes, finish, then usage (hidden unless asked)', () => {
    const events = [
      { event: 'messageStart', data: { role: 'assistant' } },
      { event: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'é' } } },
      { event: 'contentBlockStop', data: { contentBlockIndex: 0 } },
      { event: 'contentBlockStart', data: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'a1', name: 'f' } } } },
      { event: 'contentBlockDelta', data: { contentBlockIndex: 1, delta: { toolUse: { input: '{"k":' } } } },
      { event: 'contentBlockStart', data: { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'a2', name: 'g' } } } },
      { event: 'contentBlockDelta', data: { contentBlockIndex: 1, delta: { toolUse: { input: '1}' } } } },
      { event: 'contentBlockDelta', data: { contentBlockIndex: 2, delta: { reasoningContent: { text: 'dropped' } } } },
      { event: 'initial-response', data: {} },
      { event: 'messageStop', data: { stopReason: 'tool_use' } },
      { event: 'metadata', data: { usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 }, metrics: { latencyMs: 1 } } },
    ];
    const { chunks, parsed, done } = run(events);
    expect(done).toBe(true);
    expect(parsed.map((c) => c.choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'é' },
      { tool_calls: [{ index: 0, id: 'a1', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"k":' } }] },
      { tool_calls: [{ index: 1, id: 'a2', type: 'function', function: { name: 'g', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '1}' } }] },
      {},
    ]);
    expect(parsed.at(-1).choices[0].finish_reason).toBe('tool_calls');
    expect(new Set(parsed.map((c) => c.id)).size).toBe(1);
    expect(chunks.at(-1)).toEqual({ data: '', usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    const asked = run(events, true).parsed.at(-1);
    expect(asked.choices).toEqual([]);
    expect(asked.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it('an error event (exception frame) throws with the mapped status and the provider message', () => {
    const e = refusal(() => run([{ event: 'messageStart', data: {} }, { event: 'error', data: { type: 'throttlingException', message: 'slow' } }]));
    expect(e.status).toBe(429);
    expect(e.message).toBe('slow');
    const v = refusal(() => run([{ event: 'error', data: { type: 'validationException', message: 'bad' } }]));
    expect(v.status).toBe(400);
  });

  it('a body that ends before messageStop is stream_interrupted; ending after it without metadata is whole', () => {
    expect(refusal(() => run([{ event: 'messageStart', data: {} }, { event: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'a' } } }])).code).toBe('stream_interrupted');
    expect(run([{ event: 'messageStart', data: {} }, { event: 'messageStop', data: { stopReason: 'max_tokens' } }]).parsed.at(-1).choices[0].finish_reason).toBe('length');
  });
});
