/**
 * The OpenAI-compatible catalog's quirks end to end: the official openai SDK → the gateway → a fake of
 * the host (test/fakes/compat-hosts.ts) that refuses what the real host refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { DEEPSEEK_KEY, GROQ_KEY, MISTRAL_KEY, startDeepSeek, startGroq, startMistral, type MistralScript } from '../fakes/compat-hosts.js';
import type { FakeOpenAI } from '../fakes/openai-server.js';
import { logLine, traceId } from '../http/_util.js';

let mistral: FakeOpenAI;
let deepseek: FakeOpenAI;
let groq: FakeOpenAI;
let gw: TestGateway;
let mistralScript: MistralScript = {};
let deepseekFinish: string | undefined;

beforeAll(async () => {
  mistral = await startMistral(() => mistralScript);
  deepseek = await startDeepSeek(() => (deepseekFinish ? { finishReason: deepseekFinish } : {}));
  groq = await startGroq();
  gw = await startGateway({
    bootstrapYaml: `virtual_keys:\n  ds-main:\n    provider: deepseek\n    api_key: ${DEEPSEEK_KEY}\nprovider_base_urls:\n  deepseek: ${deepseek.baseUrl}\n`,
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([mistral?.close(), deepseek?.close(), groq?.close()]);
});

function sdk(apiKey: string, headers: Record<string, string>): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': gw.key, ...headers } });
}

const mistralClient = () => sdk(MISTRAL_KEY, { 'x-gateway-provider': 'mistral', 'x-gateway-custom-host': mistral.baseUrl });

/** A conversation that carries tool-call ids from another provider (OpenAI's `call_…`, Anthropic's `toolu_…`). */
const FOREIGN_TURNS: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'user', content: 'Weather in Paris and Lyon?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'call_9f8e7d6c5b4a39281', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
      { id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'weather', arguments: '{"city":"Lyon"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_9f8e7d6c5b4a39281', content: '18°C' },
  { role: 'tool', tool_call_id: 'toolu_01A09q90qw90lq917835lq9', content: '21°C' },
];
const TOOLS: OpenAI.Chat.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
];

describe('mistral', () => {
  it('rewrites foreign tool-call ids consistently (tool_calls[].id and tool_call_id), seed → random_seed', async () => {
    mistralScript = {};
    const before = mistral.requests.length;
    const r = await mistralClient().chat.completions.create({ model: 'mistral-small-latest', messages: FOREIGN_TURNS, tools: TOOLS, seed: 7, max_completion_tokens: 50 });
    expect(r.choices[0]!.message.content).toBe('Bonjour');
    const sent = mistral.requests[before]!.body;
    expect(sent.random_seed).toBe(7);
    expect(sent.seed).toBeUndefined();
    expect(sent.max_tokens).toBe(50);
    expect(sent.max_completion_tokens).toBeUndefined();
    const ids = sent.messages[1].tool_calls.map((c: { id: string }) => c.id);
    expect(ids.every((id: string) => /^[a-zA-Z0-9]{9}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(2);
    expect([sent.messages[2].tool_call_id, sent.messages[3].tool_call_id]).toEqual(ids);
    // Stable: the same conversation sent again maps the same ids.
    await mistralClient().chat.completions.create({ model: 'mistral-small-latest', messages: FOREIGN_TURNS, tools: TOOLS });
    expect(mistral.requests[before + 1]!.body.messages[1].tool_calls.map((c: { id: string }) => c.id)).toEqual(ids);
  });

  it('a tool call answered by mistral round-trips with its own id unchanged', async () => {
    mistralScript = { toolCall: { name: 'weather', arguments: '{"city":"Nice"}' } };
    const client = mistralClient();
    const first = await client.chat.completions.create({ model: 'mistral-small-latest', messages: [{ role: 'user', content: 'Nice?' }], tools: TOOLS });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call.id).toBe('Ab3dE5gH9');
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    mistralScript = {};
    const before = mistral.requests.length;
    await client.chat.completions.create({
      model: 'mistral-small-latest',
      tools: TOOLS,
      messages: [{ role: 'user', content: 'Nice?' }, first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: '24°C' }],
    });
    expect(mistral.requests[before]!.body.messages[2].tool_call_id).toBe('Ab3dE5gH9');
  });

  it('stream: no stream_options sent, usage read from the last content chunk, tool calls assembled by chat.completions.stream()', async () => {
    mistralScript = { toolCall: { name: 'weather', arguments: '{"city":"Nice"}' } };
    const before = mistral.requests.length;
    const trace = traceId('mistral-stream');
    const runner = sdk(MISTRAL_KEY, { 'x-gateway-provider': 'mistral', 'x-gateway-custom-host': mistral.baseUrl, 'x-gateway-trace-id': trace }).chat.completions.stream({
      model: 'mistral-small-latest',
      messages: FOREIGN_TURNS,
      tools: TOOLS,
      stream_options: { include_usage: true },
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message.tool_calls![0]!.function).toEqual({ name: 'weather', arguments: '{"city":"Nice"}' });
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(mistral.requests[before]!.body.stream_options).toBeUndefined();
    const line = await logLine(gw, trace);
    expect(line.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
  });

  it('model_length becomes finish_reason length, in JSON and in a stream', async () => {
    mistralScript = { finishReason: 'model_length' };
    const client = mistralClient();
    const r = await client.chat.completions.create({ model: 'mistral-small-latest', messages: [{ role: 'user', content: 'x' }] });
    expect(r.choices[0]!.finish_reason).toBe('length');
    const stream = await client.chat.completions.create({ model: 'mistral-small-latest', messages: [{ role: 'user', content: 'x' }], stream: true });
    const reasons: (string | null)[] = [];
    for await (const c of stream) reasons.push(c.choices[0]?.finish_reason ?? null);
    expect(reasons.filter(Boolean)).toEqual(['length']);
  });

  it('a wrong key is the host error with its status and message', async () => {
    mistralScript = {};
    const e = await sdk('sk-wrong', { 'x-gateway-provider': 'mistral', 'x-gateway-custom-host': mistral.baseUrl })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .then(() => undefined, (err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
    if (!e) throw new Error('expected an error');
    expect(e.status).toBe(401);
    expect(e.message).toContain('Unauthorized');
  });
});

describe('deepseek', () => {
  // Reached through a virtual key and the operator's base URL override (provider_base_urls).
  const client = () => sdk('unused-by-the-gateway', { 'x-gateway-virtual-key': 'ds-main' });

  it('strips reasoning_content from assistant messages sent back, keeps it in the answer, reads cache hits', async () => {
    const trace = traceId('ds-json');
    const r = await sdk('unused', { 'x-gateway-virtual-key': 'ds-main', 'x-gateway-trace-id': trace }).chat.completions.create({
      model: 'deepseek-reasoner',
      messages: [
        { role: 'user', content: 'Capital of France?' },
        { role: 'assistant', content: 'Paris', reasoning_content: 'Easy.' } as OpenAI.Chat.ChatCompletionMessageParam,
        { role: 'user', content: 'And of Italy?' },
      ],
    });
    expect(r.choices[0]!.message.content).toBe('Paris');
    expect((r.choices[0]!.message as unknown as { reasoning_content: string }).reasoning_content).toBe('The capital of France is Paris.');
    const sent = deepseek.requests.at(-1)!;
    expect(sent.body.messages[1]).toEqual({ role: 'assistant', content: 'Paris' });
    expect(sent.headers.authorization).toBe(`Bearer ${DEEPSEEK_KEY}`);
    const line = await logLine(gw, trace);
    expect(line.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 8, prompt_tokens_details: { cached_tokens: 16 } });
  });

  it('stream with keep-alive comments, CRLF and a UTF-8 character split across writes; usage hidden unless asked', async () => {
    const stream = await client().chat.completions.create({ model: 'deepseek-chat', messages: [{ role: 'user', content: 'x' }], stream: true });
    let content = '';
    let reasoning = '';
    let sawUsage = false;
    for await (const c of stream) {
      content += c.choices[0]?.delta?.content ?? '';
      reasoning += (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
      if (c.usage) sawUsage = true;
    }
    expect(content).toBe('Parïs');
    expect(reasoning).toBe('Thinking about ünïcödé…');
    expect(sawUsage).toBe(false);
    expect(deepseek.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
  });

  it('insufficient_system_resource becomes finish_reason length', async () => {
    deepseekFinish = 'insufficient_system_resource';
    try {
      const r = await client().chat.completions.create({ model: 'deepseek-chat', messages: [{ role: 'user', content: 'x' }] });
      expect(r.choices[0]!.finish_reason).toBe('length');
    } finally {
      deepseekFinish = undefined;
    }
  });
});

describe('groq', () => {
  it('reads usage from x_groq.usage on the final chunk of a legacy stream', async () => {
    const trace = traceId('groq-stream');
    const stream = await sdk(GROQ_KEY, { 'x-gateway-provider': 'groq', 'x-gateway-custom-host': groq.baseUrl, 'x-gateway-trace-id': trace }).chat.completions.create({
      model: 'llama-3.1-8b-instant',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    let content = '';
    for await (const c of stream) content += c.choices[0]?.delta?.content ?? '';
    expect(content).toBe('hey');
    const line = await logLine(gw, trace);
    expect(line.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
  });
});
