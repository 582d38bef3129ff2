/**
 * The stages before and after the target read a Responses API body through its endpoint: the texts
 * guardrails and hooks check and rewrite, and the usage estimate limits reserve.
 */
import { describe, expect, it } from 'vitest';
import { requestTexts, responseText, rewriteRequestText, rewriteResponseText } from '../../src/checks/text.js';
import { DEFAULT_OUTPUT_TOKENS, estimateTokens, MESSAGE_OVERHEAD_TOKENS, textTokens } from '../../src/pricing/usage-estimate.js';
import { post } from '../helpers/http.js';
import { gatewayAndFake } from './harness.js';

const items = {
  model: 'gpt-4o',
  instructions: 'Be kind.',
  input: [
    { role: 'user', content: [{ type: 'input_text', text: 'first' }] },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'reply' }] },
    { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
    { role: 'user', content: 'second' },
  ],
};
const answer = { object: 'response', output: [{ type: 'function_call' }, { type: 'message', content: [{ type: 'output_text', text: 'out' }, { type: 'refusal', refusal: 'no' }] }] };

describe('check texts of a Responses body', () => {
  it('the latest user turn, and the instructions with every message', () => {
    expect(requestTexts('responses', items)).toEqual({ text: 'second', allText: 'Be kind.\nfirst\nreply\nsecond' });
    expect(requestTexts('responses', { model: 'm', input: 'just this' })).toEqual({ text: 'just this', allText: 'just this' });
  });

  it("the answer's output messages (text and refusal)", () => {
    expect(responseText('responses', answer)).toBe('out\nno');
  });

  it('rewrites reach the input items and the output text; nothing changed is undefined', () => {
    const up = (t: string) => t.toUpperCase();
    expect((rewriteRequestText('responses', items, up)!.input as { content: unknown }[]).map((i) => i.content)).toEqual([
      [{ type: 'input_text', text: 'FIRST' }],
      [{ type: 'output_text', text: 'REPLY' }],
      undefined,
      'SECOND',
    ]);
    expect(rewriteRequestText('responses', { input: 'a' }, up)).toEqual({ input: 'A' });
    expect(rewriteRequestText('responses', { input: 'A' }, up)).toBeUndefined();
    expect((rewriteResponseText('responses', answer, up)!.output as { content?: unknown }[])[1]!.content).toEqual([{ type: 'output_text', text: 'OUT' }, { type: 'refusal', refusal: 'no' }]);
  });
});

describe('usage estimate of a Responses body', () => {
  it('items as messages, instructions as text; output max_output_tokens, else the default', () => {
    const fc = MESSAGE_OVERHEAD_TOKENS + textTokens('c') + textTokens('f') + textTokens('{}');
    const input = textTokens('Be kind.') + 3 * MESSAGE_OVERHEAD_TOKENS + textTokens('first') + textTokens('reply') + textTokens('second') + fc;
    expect(estimateTokens('responses', items)).toEqual({ input, output: DEFAULT_OUTPUT_TOKENS });
    expect(estimateTokens('responses', { model: 'gpt-4o', input: 'hello there', max_output_tokens: 50 })).toEqual({ input: textTokens('hello there'), output: 50 });
  });
});

describe('guardrails on /v1/responses', () => {
  const env = gatewayAndFake();
  const send = (config: unknown, body: unknown) => post(`${env.gw.url}/v1/responses`, env.gw.headers({ 'x-gateway-config': JSON.stringify(config) }), body);

  it('an input guardrail reads the input items: a deny is a 446 before any upstream call', async () => {
    const config = { provider: 'openai-compatible', custom_host: env.fake.baseUrl, api_key: 'k', input_guardrails: [{ id: 'no-secrets', 'default.regexMatch': { rule: 'secret', not: true }, deny: true }] };
    const r = await send(config, { model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_text', text: 'my secret' }] }] });
    expect(r.status).toBe(446);
    expect(env.fake.requests).toHaveLength(0);
  });

  it("an output guardrail reads the response's output text", async () => {
    const config = { provider: 'openai', custom_host: env.fake.baseUrl, api_key: 'k', output_guardrails: [{ id: 'no-echo', 'default.contains': { words: ['echo'], operator: 'none' }, deny: true }] };
    const r = await send(config, { model: 'gpt-4o-mini', input: 'hi' });
    expect(r.status).toBe(446);
    expect(JSON.stringify(r.json)).not.toContain('echo: hi');
  });
});
