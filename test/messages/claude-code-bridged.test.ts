import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import Anthropic from '@anthropic-ai/sdk';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { anthropicError, FakeAnthropic, fakeTokenCount, messageStream } from '../fakes/anthropic-server.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { FakeVertex } from '../fakes/vertex-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { EXCHANGE_TIMEOUT_MS } from '../helpers/http.js';
import { configClient } from './_door.js';
import { CLAUDE_CODE_BODY, CLAUDE_CODE_HEADERS } from './fixtures/claude-code.js';

/**
 * A Claude Code session on other model families: its recorded turn routed to an OpenAI-shaped and
 * a Gemini-shaped provider, and a fallback from Anthropic (529 overloaded) to OpenAI in the middle
 * of a conversation. Thinking is dropped, tool uses and results are kept.
 */
const ANT_KEY = 'sk-ant-session';
const TOKEN = 'ya29.static-session-token';
let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
let vertex: FakeVertex;
let gw: TestGateway;

beforeAll(async () => {
  [anthropic, openai, vertex, gw] = await Promise.all([FakeAnthropic.start(ANT_KEY), FakeOpenAI.start(), FakeVertex.start(), startGateway()]);
  vertex.staticTokens.add(TOKEN);
});
afterEach(() => {
  anthropic.reset();
  openai.reset();
  vertex.reset();
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([anthropic?.close(), openai?.close(), vertex?.close()]);
});

const openaiTarget = () => ({ provider: 'openai', api_key: 'sk-openai-session', custom_host: openai.baseUrl, override_params: { model: 'gpt-4o', max_tokens: 16384 } });
const geminiTarget = () => ({ provider: 'vertex-ai', api_key: TOKEN, custom_host: vertex.baseUrl, cloud_c_region: 'us-central1', cloud_c_project_id: 'p', override_params: { model: 'gemini-2.5-flash' } });
const anthropicTarget = () => ({ provider: 'anthropic', api_key: ANT_KEY, custom_host: anthropic.baseUrl });

/** Claude Code's recorded request as it sends it, routed by a config header. */
async function replay(config: unknown): Promise<{ status: number; text: string }> {
  const res = await request(`${gw.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { ...CLAUDE_CODE_HEADERS, 'x-api-key': gw.key, 'x-gateway-config': JSON.stringify(config) },
    body: CLAUDE_CODE_BODY,
    headersTimeout: EXCHANGE_TIMEOUT_MS,
    bodyTimeout: EXCHANGE_TIMEOUT_MS,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

const eventNames = (text: string): string[] => text.split('\n\n').filter(Boolean).map((f) => f.split('\n')[0]!.replace('event: ', ''));
const recorded = JSON.parse(CLAUDE_CODE_BODY) as { system: { text: string }[]; messages: { content: { text?: string; content?: string; input?: unknown }[] }[]; tools: { name: string; input_schema: unknown }[] };

describe('Claude Code’s turn on other model families', () => {
  it('to OpenAI: the system joined, thinking dropped, the tool use and its result kept, the tools as functions; Anthropic’s stream back', async () => {
    const res = await replay(openaiTarget());
    expect(res.status).toBe(200);
    const [up] = await openai.waitForRequests(1);
    expect(up!.body.messages).toEqual([
      { role: 'system', content: `${recorded.system[0]!.text}\n\n${recorded.system[1]!.text}` },
      { role: 'user', content: recorded.messages[0]!.content.map((b) => ({ type: 'text', text: b.text })) },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'Read', arguments: JSON.stringify(recorded.messages[1]!.content[2]!.input) } }] },
      { role: 'tool', tool_call_id: 'toolu_01A09q90qw90lq917835lq9', content: recorded.messages[2]!.content[0]!.content },
    ]);
    expect(up!.body.tools.map((t: { function: { name: string; parameters: unknown } }) => [t.function.name, t.function.parameters])).toEqual(recorded.tools.map((t) => [t.name, t.input_schema]));
    // Claude Code asks for 32,000 output tokens; the target's override_params bring it to what gpt-4o writes.
    expect(up!.body).toMatchObject({ model: 'gpt-4o', max_completion_tokens: 16384, temperature: 1, user: 'user_3f1c_account_9a2b_session_77e0', stream: true });
    expect(up!.body.thinking).toBeUndefined();
    expect(up!.rawBody).not.toMatch(/signature|redacted_thinking|cache_control/);
    expect(up!.headers['anthropic-beta']).toBeUndefined();
    expect(eventNames(res.text)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  });

  it('to Gemini on Vertex AI: the same turn as systemInstruction, a functionCall and its functionResponse', async () => {
    const res = await replay(geminiTarget());
    expect(res.status).toBe(200);
    const up = vertex.calls.at(-1)!;
    expect(up.path).toMatch(/publishers\/google\/models\/gemini-2\.5-flash:streamGenerateContent$/);
    expect(up.body.systemInstruction.parts.map((p: { text: string }) => p.text).join('')).toContain('You are Claude Code');
    expect(up.body.contents).toEqual([
      { role: 'user', parts: recorded.messages[0]!.content.map((b) => ({ text: b.text })) },
      { role: 'model', parts: [{ functionCall: { name: 'Read', args: recorded.messages[1]!.content[2]!.input } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'Read', response: { content: recorded.messages[2]!.content[0]!.content } } }] },
    ]);
    expect(JSON.stringify(up.body)).not.toMatch(/signature|thinking/);
    expect(eventNames(res.text).at(0)).toBe('message_start');
    expect(eventNames(res.text).slice(-2)).toEqual(['message_delta', 'message_stop']);
  });
});

describe('a fallback from Claude to OpenAI in the middle of a conversation', () => {
  const config = () => ({ strategy: { mode: 'fallback' }, targets: [anthropicTarget(), openaiTarget()] });
  const ask = (history: Anthropic.MessageParam[]) => ({ model: 'claude-sonnet-4-5', max_tokens: 1024, thinking: { type: 'enabled' as const, budget_tokens: 512 }, tools: [{ name: 'Read', input_schema: { type: 'object' as const } }], messages: history });

  it('turn one from Claude (thinking and a tool use); turn two, Claude overloaded, answered by OpenAI as a normal message, JSON and stream', async () => {
    const sdk = configClient(gw, config());
    anthropic.enqueue('/v1/messages', {
      json: {
        id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'tool_use', stop_sequence: null,
        content: [{ type: 'thinking', thinking: 'Read it.', signature: 'sig-1' }, { type: 'tool_use', id: 'toolu_9', name: 'Read', input: { file_path: '/a' } }],
        usage: { input_tokens: 10, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'What is in /a?' }];
    const first = await sdk.messages.create(ask(history));
    history.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'forty-two' }] });

    anthropic.enqueue('/v1/messages', anthropicError(529, 'overloaded_error', 'Overloaded'));
    const second = await sdk.messages.create(ask(history));
    expect(second).toMatchObject({ type: 'message', role: 'assistant', model: 'gpt-4o', content: [{ type: 'text', text: 'echo: What is in /a?' }], stop_reason: 'end_turn' });
    const chat = openai.requests.at(-1)!.body;
    expect(chat.messages).toEqual([
      { role: 'user', content: 'What is in /a?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/a"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_9', content: 'forty-two' },
    ]);

    anthropic.enqueue('/v1/messages', anthropicError(529, 'overloaded_error', 'Overloaded'));
    const streamed = await sdk.messages.stream(ask(history)).finalMessage();
    expect(streamed).toMatchObject({ model: 'gpt-4o', content: [{ type: 'text', text: 'Hello' }], stop_reason: 'end_turn' });
    expect(anthropic.requests).toHaveLength(3);
    expect(openai.requests).toHaveLength(2);

    // Back on Claude for turn three: the history the client keeps is Anthropic's own shape.
    anthropic.enqueue('/v1/messages', { frames: messageStream([{ text: ['done'] }]) });
    history.push({ role: 'assistant', content: streamed.content }, { role: 'user', content: 'Thanks.' });
    const third = await sdk.messages.stream(ask(history)).finalMessage();
    expect(third.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(anthropic.requests.at(-1)!.body.messages).toEqual(JSON.parse(JSON.stringify(history)));
  });

  it('a token count: Claude’s when it answers, the gateway’s estimate when Claude is overloaded', async () => {
    const sdk = configClient(gw, config());
    const body = { model: 'claude-sonnet-4-5', messages: [{ role: 'user' as const, content: 'How long is this?' }] };
    const counted = await sdk.messages.countTokens(body);
    anthropic.enqueue('/v1/messages/count_tokens', anthropicError(529, 'overloaded_error', 'Overloaded'));
    const estimated = await sdk.messages.countTokens(body);
    expect(anthropic.requests.map((r) => r.path)).toEqual(['/v1/messages/count_tokens', '/v1/messages/count_tokens']);
    expect(openai.requests).toHaveLength(0);
    expect(counted.input_tokens).toBe(fakeTokenCount(body));
    // The estimate's rule: 4 for the message's framing, its text in o200k_base tokens.
    expect(estimated.input_tokens).toBe(4 + countTokens('How long is this?'));
  });
});
