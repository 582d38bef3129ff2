import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { anthropic } from '../../src/providers/anthropic/index.js';
import { DEFAULT_MAX_TOKENS } from '../../src/providers/anthropic/descriptor.js';
import { ProviderRegistry, defaultProviders } from '../../src/providers/registry.js';
import type { ProviderRequest, StreamChunk, StreamEvent, Target } from '../../src/providers/types.js';
import { createSseDecoder } from '../../src/upstream/sse-decode.js';
import { thrownBy } from '../helpers/throws.js';

const NOW = 1_760_000_000;
const provider = anthropic({ nowSeconds: () => NOW });
const BASE = 'https://api.anthropic.com/v1';
const target: Target = { provider: 'anthropic', api_key: 'sk-ant-test' };
const thrown = (fn: () => unknown): GatewayError => thrownBy(GatewayError, fn);

function request(body: Record<string, unknown>, over: Partial<ProviderRequest> = {}): ProviderRequest {
  return { endpoint: 'chat', body: { model: 'claude-sonnet-4-5', ...body }, stream: false, headers: {}, ...over };
}
const user = (content: unknown) => ({ messages: [{ role: 'user', content }] });
/** The Anthropic body the gateway would send. */
const sent = (body: Record<string, unknown>, stream = false): any =>
  JSON.parse(provider.toProvider(request(body, { stream }), target, BASE).body!);

// ---------------------------------------------------------------------------------------------
// OpenAI request → Anthropic request
// ---------------------------------------------------------------------------------------------

describe('anthropic toProvider: the HTTP request', () => {
  it('POSTs {base}/messages with x-api-key and anthropic-version, never a Bearer header', () => {
    const u = provider.toProvider(request(user('hi')), target, BASE);
    expect(u.origin).toBe('https://api.anthropic.com');
    expect(u.path).toBe('/v1/messages');
    expect(u.method).toBe('POST');
    expect(u.headers).toEqual({ 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-ant-test', 'content-type': 'application/json' });
  });

  it('custom_host is the base URL composed as the default is: {custom_host}/messages', () => {
    const u = provider.toProvider(request(user('hi')), { ...target, custom_host: 'http://127.0.0.1:9000/proxy/v1' }, 'http://127.0.0.1:9000/proxy/v1');
    expect(u.origin).toBe('http://127.0.0.1:9000');
    expect(u.path).toBe('/proxy/v1/messages');
  });

  it('a stream asks for text/event-stream and stream: true; stream_options stays with the gateway', () => {
    const u = provider.toProvider(request({ ...user('hi'), stream: true, stream_options: { include_usage: true } }, { stream: true }), target, BASE);
    expect(u.headers.accept).toBe('text/event-stream');
    const body = JSON.parse(u.body!);
    expect(body.stream).toBe(true);
    expect(body).not.toHaveProperty('stream_options');
  });

  it('GET /v1/models → GET {base}/models for every model in one page', () => {
    const u = provider.toProvider({ endpoint: 'models', body: undefined, stream: false, headers: {} }, target, BASE);
    expect(u.method).toBe('GET');
    expect(u.path).toBe('/v1/models?limit=1000');
    expect(u.body).toBeUndefined();
  });

  it('completions and embeddings are a 400 unsupported_endpoint naming the provider and the endpoint', () => {
    for (const endpoint of ['completions', 'embeddings'] as const) {
      const e = thrown(() => provider.toProvider({ endpoint, body: { model: 'm' }, stream: false, headers: {} }, target, BASE));
      expect(e.code).toBe('unsupported_endpoint');
      expect(e.status).toBe(400);
      expect(e.message).toContain('anthropic');
      expect(e.message).toContain(`/v1/${endpoint}`);
    }
  });

  it('forward_headers pass, but never replace x-api-key or anthropic-version', () => {
    const req = request(user('hi'), {
      forwardHeaders: ['anthropic-beta', 'x-api-key', 'anthropic-version', 'authorization'],
      headers: { 'anthropic-beta': 'prompt-caching-2024-07-31', 'x-api-key': 'client-chosen', 'anthropic-version': '1999', authorization: 'Bearer x' },
    });
    const u = provider.toProvider(req, target, BASE);
    expect(u.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    expect(u.headers['x-api-key']).toBe('sk-ant-test');
    expect(u.headers['anthropic-version']).toBe('2023-06-01');
    expect(u.headers).not.toHaveProperty('authorization');
  });
});

describe('anthropic toProvider: the body', () => {
  it('system and developer messages become the top-level system, in order; the rest alternate', () => {
    const body = sent({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: 'Bonjour' },
      ],
    });
    expect(body.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Answer in French.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(body.messages).toEqual([{ role: 'user', content: 'Bonjour' }]);
  });

  it(`max_tokens defaults to ${DEFAULT_MAX_TOKENS}; max_completion_tokens wins over max_tokens`, () => {
    expect(sent(user('hi')).max_tokens).toBe(DEFAULT_MAX_TOKENS);
    expect(sent({ ...user('hi'), max_tokens: 100 }).max_tokens).toBe(100);
    expect(sent({ ...user('hi'), max_tokens: 100, max_completion_tokens: 50 }).max_tokens).toBe(50);
    expect(sent({ ...user('hi'), max_completion_tokens: null, max_tokens: 7 }).max_tokens).toBe(7);
  });

  it('stop → stop_sequences (a string is wrapped); temperature 0–1 and top_p pass; user → metadata.user_id', () => {
    expect(sent({ ...user('hi'), stop: 'END' }).stop_sequences).toEqual(['END']);
    const b = sent({ ...user('hi'), stop: ['a', 'b'], temperature: 0.7, top_p: 0.9, user: 'u-42' });
    expect(b).toMatchObject({ stop_sequences: ['a', 'b'], temperature: 0.7, top_p: 0.9, metadata: { user_id: 'u-42' } });
    expect(b).not.toHaveProperty('user');
  });

  it('temperature above 1 is a 400 naming temperature (Anthropic takes 0–1, OpenAI 0–2)', () => {
    const e = thrown(() => sent({ ...user('hi'), temperature: 1.5 }));
    expect(e.code).toBe('invalid_request_body');
    expect(e.param).toBe('temperature');
    expect(e.message).toContain('0 to 1');
    expect(sent({ ...user('hi'), temperature: 1 }).temperature).toBe(1);
  });

  it.each([
    ['n', 2],
    ['logprobs', true],
    ['top_logprobs', 3],
    ['logit_bias', { '50256': -100 }],
    ['presence_penalty', 0.5],
    ['frequency_penalty', -1],
    ['seed', 42],
    ['response_format', { type: 'json_object' }],
    ['functions', [{ name: 'f' }]],
    ['function_call', 'auto'],
    ['modalities', ['text', 'audio']],
    ['reasoning_effort', 'high'],
  ])('%s that would change the answer is a 400 naming it', (field, value) => {
    const e = thrown(() => sent({ ...user('hi'), [field]: value }));
    expect(e.status).toBe(400);
    expect(e.param).toBe(field);
    expect(e.message).toContain('Anthropic');
  });

  it('their defaults are accepted and not sent; harmless OpenAI fields are dropped; Anthropic fields pass', () => {
    const b = sent({
      ...user('hi'),
      n: 1,
      logprobs: false,
      presence_penalty: 0,
      frequency_penalty: 0,
      response_format: { type: 'text' },
      logit_bias: {},
      store: false,
      metadata: { tag: 'x' },
      service_tier: 'auto',
      top_k: 5,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(Object.keys(b).sort()).toEqual(['max_tokens', 'messages', 'model', 'thinking', 'top_k']);
  });

  it('tools → name/description/input_schema; strict is dropped; a non-function tool is a 400', () => {
    const b = sent({
      ...user('hi'),
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true } },
        { type: 'function', function: { name: 'now' } },
      ],
    });
    expect(b.tools).toEqual([
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(thrown(() => sent({ ...user('hi'), tools: [{ type: 'custom', custom: { name: 'x' } }] })).param).toBe('tools[0].type');
  });

  const tools = [
    { type: 'function', function: { name: 'a', parameters: { type: 'object' } } },
    { type: 'function', function: { name: 'b', parameters: { type: 'object' } } },
  ];
  it.each([
    ['auto', { type: 'auto' }],
    ['none', { type: 'none' }],
    ['required', { type: 'any' }],
    [{ type: 'function', function: { name: 'b' } }, { type: 'tool', name: 'b' }],
  ])('tool_choice %j → %j', (choice, expected) => {
    expect(sent({ ...user('hi'), tools, tool_choice: choice }).tool_choice).toEqual(expected);
  });

  it('allowed_tools narrows the tools; parallel_tool_calls: false → disable_parallel_tool_use', () => {
    const b = sent({
      ...user('hi'),
      tools,
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'b' } }] } },
      parallel_tool_calls: false,
    });
    expect(b.tools.map((t: any) => t.name)).toEqual(['b']);
    expect(b.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(sent({ ...user('hi'), tools, parallel_tool_calls: false }).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(sent({ ...user('hi'), tools, parallel_tool_calls: true })).not.toHaveProperty('tool_choice');
    expect(thrown(() => sent({ ...user('hi'), tools, tool_choice: 'sometimes' })).param).toBe('tool_choice');
  });

  it('assistant tool_calls → tool_use; consecutive tool messages → one user turn of tool_results, then the next user text joins it', () => {
    const b = sent({
      messages: [
        { role: 'user', content: 'Weather in Paris and Oslo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '9°C' }] },
        { role: 'user', content: 'Which is warmer?' },
      ],
    });
    expect(b.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Oslo?' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '9°C' }] },
          { type: 'text', text: 'Which is warmer?' },
        ],
      },
    ]);
  });

  it('assistant text with tool calls keeps the text first; an empty text is not sent (Anthropic refuses empty blocks)', () => {
    const call = { id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } };
    const msgs = (content: unknown) => [{ role: 'user', content: 'go' }, { role: 'assistant', content, tool_calls: [call] }];
    expect(sent({ messages: msgs('Let me check.') }).messages[1].content).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 't1', name: 'f', input: {} },
    ]);
    expect(sent({ messages: msgs('') }).messages[1].content).toEqual([{ type: 'tool_use', id: 't1', name: 'f', input: {} }]);
  });

  it('tool call arguments that are not a JSON object are a 400 naming them', () => {
    const bad = (args: string) => ({
      messages: [{ role: 'user', content: 'go' }, { role: 'assistant', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: args } }] }],
    });
    expect(thrown(() => sent(bad('{nope'))).param).toBe('messages[1].tool_calls[0].function.arguments');
    expect(thrown(() => sent(bad('[1]'))).param).toBe('messages[1].tool_calls[0].function.arguments');
  });

  it('image parts: data URLs → base64 source, http(s) URLs → url source; other URLs and audio are a 400', () => {
    const b = sent(
      user([
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
      ]),
    );
    expect(b.messages[0].content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
    expect(thrown(() => sent(user([{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }]))).param).toBe('messages[0].content[0].image_url.url');
    expect(thrown(() => sent(user([{ type: 'image_url', image_url: { url: 'data:image/png,rawbytes' } }]))).param).toBe('messages[0].content[0].image_url.url');
    expect(thrown(() => sent(user([{ type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }]))).param).toBe('messages[0].content[0]');
  });

  it('a legacy function message is a 400 naming its role', () => {
    expect(thrown(() => sent({ messages: [{ role: 'function', name: 'f', content: 'x' }] })).param).toBe('messages[0].role');
  });
});

// ---------------------------------------------------------------------------------------------
// Anthropic answer → OpenAI answer
// ---------------------------------------------------------------------------------------------

const MESSAGE = {
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'thinking', thinking: 'hmm', signature: 'sig' },
    { type: 'text', text: 'Checking ' },
    { type: 'text', text: 'both.' },
    { type: 'tool_use', id: 'toolu_A', name: 'get_weather', input: { city: 'Paris' } },
    { type: 'tool_use', id: 'toolu_B', name: 'get_weather', input: { city: 'Oslo', units: 'C' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 20, output_tokens: 30, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000 },
};

describe('anthropic fromJson', () => {
  it('text blocks join, tool_use → tool_calls with JSON-string arguments, thinking dropped, usage with cache tokens', () => {
    const r = provider.fromJson(request(user('hi')), JSON.stringify(MESSAGE));
    expect(r.body).toEqual({
      id: 'msg_01',
      object: 'chat.completion',
      created: NOW,
      model: 'claude-sonnet-4-5',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Checking both.',
            refusal: null,
            tool_calls: [
              { id: 'toolu_A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'toolu_B', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo","units":"C"}' } },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 1120, completion_tokens: 30, total_tokens: 1150, prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 100 } },
    });
    expect(r.usage).toEqual((r.body as any).usage);
  });

  it('empty content with a tool call → content null', () => {
    const r = provider.fromJson(request(user('hi')), JSON.stringify({ ...MESSAGE, content: [MESSAGE.content[3]] }));
    expect((r.body as any).choices[0].message.content).toBeNull();
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['something_new', 'stop'],
  ])('stop_reason %s → finish_reason %s', (reason, finish) => {
    const r = provider.fromJson(request(user('hi')), JSON.stringify({ ...MESSAGE, content: [{ type: 'text', text: 'x' }], stop_reason: reason }));
    expect((r.body as any).choices[0].finish_reason).toBe(finish);
  });

  it('the model list → OpenAI list shape', () => {
    const text = JSON.stringify({
      data: [{ type: 'model', id: 'claude-opus-4-1', display_name: 'Claude Opus 4.1', created_at: '2025-08-05T00:00:00Z' }],
      has_more: false,
      first_id: 'claude-opus-4-1',
      last_id: 'claude-opus-4-1',
    });
    const r = provider.fromJson({ endpoint: 'models', body: undefined, stream: false, headers: {} }, text);
    expect(r.body).toEqual({ object: 'list', data: [{ id: 'claude-opus-4-1', object: 'model', created: 1754352000, owned_by: 'anthropic' }] });
  });

  it('a body that is not JSON is upstream_invalid_response', () => {
    expect(thrown(() => provider.fromJson(request(user('hi')), '<html>')).code).toBe('upstream_invalid_response');
  });
});

describe('anthropic fromError', () => {
  const body = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_1' });

  it('429 rate_limit_error keeps the status, the message, and Retry-After', () => {
    const e = provider.fromError(429, body('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'), { 'retry-after': '7' });
    expect(e.status).toBe(429);
    expect(e.message).toBe('Number of request tokens has exceeded your per-minute rate limit');
    expect(e.headers).toEqual({ 'retry-after': '7' });
    expect(e.toBody('t')).toEqual({
      error: { message: 'Number of request tokens has exceeded your per-minute rate limit', type: 'rate_limit_error', code: 'rate_limit_error', param: null },
      trace_id: 't',
    });
  });

  it('529 overloaded_error is answered 503 (retried and failed over like any 503)', () => {
    const e = provider.fromError(529, body('overloaded_error', 'Overloaded'), {});
    expect(e.status).toBe(503);
    expect(e.message).toBe('Overloaded');
    expect(e.upstreamCode).toBe('overloaded_error');
  });

  it('401 and 400 keep their status and message', () => {
    expect(provider.fromError(401, body('authentication_error', 'invalid x-api-key'), {})).toMatchObject({ status: 401, message: 'invalid x-api-key', type: 'authentication_error' });
    expect(provider.fromError(400, body('invalid_request_error', 'max_tokens: Field required'), {})).toMatchObject({ status: 400, message: 'max_tokens: Field required' });
  });

  it('a body that is not JSON keeps its text as the message', () => {
    expect(provider.fromError(502, 'Bad gateway', {})).toMatchObject({ status: 502, message: 'Bad gateway' });
  });
});

// ---------------------------------------------------------------------------------------------
// Anthropic stream → OpenAI chunks
// ---------------------------------------------------------------------------------------------

/** A realistic Anthropic stream: text block, then a tool_use block (block index 1, tool index 0). */
const STREAM = [
  'event: message_start',
  'data: {"type":"message_start","message":{"id":"msg_S","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":50}}}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  '',
  'event: ping',
  'data: {"type": "ping"}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Grüße, "}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Welt ✓"}}',
  '',
  'event: content_block_stop',
  'data: {"type":"content_block_stop","index":0}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_X","name":"get_weather","input":{}}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\": \\"Par"}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"is\\"}"}}',
  '',
  'event: content_block_stop',
  'data: {"type":"content_block_stop","index":1}',
  '',
  'event: message_delta',
  'data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}',
  '',
  'event: message_stop',
  'data: {"type":"message_stop"}',
  '',
  '',
];

/** Feeds raw bytes through the gateway's SSE decoder, then the reducer; returns the chunks and whether it ended. */
function run(pieces: (string | Uint8Array)[], includeUsage: boolean): { chunks: StreamChunk[]; end: () => StreamChunk[] } {
  const body = { model: 'claude-sonnet-4-5', messages: [], stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) };
  let state = provider.streamStart({ endpoint: 'chat', body, stream: true, headers: {} });
  const chunks: StreamChunk[] = [];
  const events: StreamEvent[] = [];
  const dec = createSseDecoder((ev) => events.push(ev));
  for (const p of pieces) dec.write(typeof p === 'string' ? Buffer.from(p) : p);
  dec.end();
  for (const ev of events) {
    const step = provider.fromStreamEvent(state, ev);
    state = step.state;
    chunks.push(...step.chunks);
    if (step.done) break;
  }
  return { chunks, end: () => provider.streamEnd(state) };
}

const shown = (chunks: StreamChunk[]) => chunks.filter((c) => c.data !== '').map((c) => JSON.parse(c.data));

describe('anthropic stream → OpenAI chunks', () => {
  it('every event type: role chunk, text, tool call with index/id/name then argument fragments, finish, usage chunk', () => {
    const { chunks, end } = run([STREAM.join('\n')], true);
    const out = shown(chunks);
    const head = { id: 'msg_S', object: 'chat.completion.chunk', created: NOW, model: 'claude-sonnet-4-5' };
    const ch = (delta: unknown, finish: string | null = null) => ({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    const usage = { prompt_tokens: 75, completion_tokens: 42, total_tokens: 117, prompt_tokens_details: { cached_tokens: 50 } };
    expect(out).toEqual([
      ch({ role: 'assistant', content: '' }),
      ch({ content: 'Grüße, ' }),
      ch({ content: 'Welt ✓' }),
      ch({ tool_calls: [{ index: 0, id: 'toolu_X', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      ch({ tool_calls: [{ index: 0, function: { arguments: '{"city": "Par' } }] }),
      ch({ tool_calls: [{ index: 0, function: { arguments: 'is"}' } }] }),
      ch({}, 'tool_calls'),
      { ...head, choices: [], usage },
    ]);
    expect(chunks.at(-1)!.usage).toEqual(usage);
    expect(end()).toEqual([]);
  });

  it('without include_usage the usage chunk is not shown, but its numbers are kept', () => {
    const { chunks } = run([STREAM.join('\n')], false);
    const last = chunks.at(-1)!;
    expect(last.data).toBe('');
    expect(last.usage).toMatchObject({ prompt_tokens: 75, completion_tokens: 42 });
    expect(shown(chunks).every((c) => c.choices.length === 1)).toBe(true);
  });

  it('CRLF line ends and UTF-8 characters split across reads give the same chunks', () => {
    const whole = run([STREAM.join('\n')], true).chunks;
    const bytes = Buffer.from(STREAM.join('\r\n'));
    const at = bytes.indexOf(Buffer.from('ü')) + 1; // inside the two bytes of ü
    const at2 = bytes.indexOf(Buffer.from('✓')) + 2; // inside the three bytes of ✓
    const split = run([bytes.subarray(0, at), bytes.subarray(at, at2), bytes.subarray(at2)], true).chunks;
    expect(split).toEqual(whole);
  });

  it('two tool calls after a text block get tool indexes 0 and 1, not the block indexes', () => {
    const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const text = [
      ev('message_start', { message: { id: 'm', model: 'c', usage: { input_tokens: 1, output_tokens: 1 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'a', name: 'f', input: {} } }),
      ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'b', name: 'g', input: {} } }),
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"x":1}' } }),
      ev('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
      ev('message_stop', {}),
    ].join('');
    const calls = shown(run([text], false).chunks).flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } },
      { index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '' } },
      { index: 1, function: { arguments: '{}' } },
      { index: 0, function: { arguments: '{"x":1}' } },
    ]);
  });

  it('an error event mid-stream throws the provider message with a status from its type', () => {
    const cut = STREAM.slice(0, 15).join('\n') + '\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const e = thrown(() => run([cut], false));
    expect(e.code).toBe('upstream_error');
    expect(e.message).toBe('Overloaded');
    expect(e.status).toBe(503);
    expect(e.upstreamCode).toBe('overloaded_error');
  });

  it('a stream that ends before message_stop is stream_interrupted', () => {
    const { end } = run([STREAM.slice(0, 15).join('\n') + '\n\n'], false);
    expect(thrown(end).code).toBe('stream_interrupted');
  });

  it('content before message_start is upstream_invalid_response', () => {
    const e = thrown(() => run([STREAM.slice(9, 12).join('\n') + '\n\n'], false));
    expect(e.code).toBe('upstream_invalid_response');
  });
});

describe('registry', () => {
  it('defaultProviders serves anthropic and @anthropic', () => {
    const reg = new ProviderRegistry(defaultProviders());
    expect(reg.find('anthropic')?.descriptor.id).toBe('anthropic');
    expect(reg.find('@Anthropic')?.descriptor.id).toBe('anthropic');
    expect(reg.baseUrl(reg.get('anthropic'), { provider: 'anthropic' })).toBe('https://api.anthropic.com/v1');
  });
});

describe('anthropic descriptor fields', () => {
  it('accepts its key and custom_host only (no OpenAI vendor or cloud fields); strict', () => {
    const f = provider.descriptor.fields;
    expect(f.groups).toEqual(['api_key', 'custom_host']);
    expect(f.schema.safeParse({ api_key: 'k', custom_host: 'http://127.0.0.1:1/v1' }).success).toBe(true);
    expect(f.schema.safeParse({ vendor_project: 'p' }).success).toBe(false);
    expect(f.secrets).toEqual(['api_key']);
  });
});
