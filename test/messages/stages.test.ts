import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { ANTHROPIC_KEY, useDoor } from './_door.js';

const door = useDoor();
const target = () => ({ provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: door.fake.baseUrl });
const configured = (config: unknown): Anthropic => door.sdk({ 'x-gateway-virtual-key': null, 'x-gateway-config': JSON.stringify(config) });
const turn = (text: string) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text }] }],
});

describe('the gateway’s stages on the Messages door', () => {
  it('input guardrails read the turns’ text blocks: a denied word is a 446 before any upstream call', async () => {
    const config = { ...target(), input_guardrails: [{ id: 'polite', 'default.contains': { operator: 'none', words: ['rude'] }, deny: true }] };
    const err = await configured(config).messages.create(turn('a rude question')).catch((e: unknown) => e);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(446);
    expect(door.fake.requests).toHaveLength(0);
    const ok = await configured(config).messages.create(turn('a kind question'));
    expect(ok.content).toEqual([{ type: 'text', text: 'echo: a kind question' }]);
  });

  it('output guardrails read the answer’s text blocks', async () => {
    const config = { ...target(), output_guardrails: [{ id: 'short', 'default.wordCount': { maxWords: 2 }, deny: true }] };
    const err = await configured(config).messages.create(turn('three words here')).catch((e: unknown) => e);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(446);
  });
});
