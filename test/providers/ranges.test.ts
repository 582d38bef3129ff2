/** Parameter ranges per provider: out-of-range values clamped to the nearest bound, in-range ones untouched. */
import { describe, expect, it } from 'vitest';
import { mapRanges } from '../../src/providers/ranges.js';
import { ANTHROPIC } from '../../src/providers/anthropic/descriptor.js';
import { BEDROCK } from '../../src/providers/bedrock/descriptor.js';
import { VERTEX_AI } from '../../src/providers/vertex-ai/descriptor.js';
import { OPENAI_COMPATIBLE } from '../../src/providers/openai-compatible/descriptors.js';

const msgs = [{ role: 'user', content: 'hi' }];

describe('mapRanges', () => {
  it('returns undefined (nothing allocated) when every value is in range or absent', () => {
    expect(mapRanges(ANTHROPIC.ranges!, { model: 'c', messages: msgs, temperature: 1, top_k: 0 })).toBeUndefined();
    expect(mapRanges(ANTHROPIC.ranges!, { model: 'c', messages: msgs })).toBeUndefined();
  });

  it('clamps to the nearest bound, says each change in order, and leaves the body given untouched', () => {
    const body = { model: 'c', messages: msgs, temperature: 1.6, top_k: -3, max_tokens: 0 };
    const m = mapRanges(ANTHROPIC.ranges!, body)!;
    expect(m.body).toEqual({ ...body, temperature: 1, top_k: 0, max_tokens: 1 });
    expect(m.said).toBe('temperature=1.6->1,top_k=-3->0,max_tokens=0->1');
    expect(body.temperature).toBe(1.6);
  });

  it('leaves a value that is not a number to the translator and the provider', () => {
    expect(mapRanges(ANTHROPIC.ranges!, { model: 'c', messages: msgs, temperature: '2' })).toBeUndefined();
  });

  it('vertex-ai: n into 1–8; a penalty of 2 (Gemini excludes 2) is sent as 1.99, −2 kept', () => {
    const m = mapRanges(VERTEX_AI.ranges!, { model: 'gemini-2.5-flash', messages: msgs, n: 20, presence_penalty: 2, frequency_penalty: -2 })!;
    expect(m.body).toMatchObject({ n: 8, presence_penalty: 1.99, frequency_penalty: -2 });
    expect(m.said).toBe('n=20->8,presence_penalty=2->1.99');
  });

  it.each([
    ['anthropic.claude-3-5-sonnet-20240620-v1:0', 500],
    ['us.anthropic.claude-sonnet-4-20250514-v1:0', 500],
    ['global.anthropic.claude-sonnet-4-5-20250929-v1:0', 500],
    ['arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0', 500],
    ['amazon.nova-pro-v1:0', 900],
    ['meta.llama3-70b-instruct-v1:0', 900],
  ])('bedrock: top_k of %s → %s (Claude family only)', (model, topK) => {
    const m = mapRanges(BEDROCK.ranges!, { model, messages: msgs, top_k: 900, temperature: 1.3 })!;
    expect(m.body.top_k).toBe(topK);
    expect(m.body.temperature).toBe(1);
  });

  it('openai and the OpenAI-compatible hosts declare no ranges: the edge validates OpenAI\'s', () => {
    expect(OPENAI_COMPATIBLE.filter((d) => d.ranges !== undefined).map((d) => d.id)).toEqual([]);
  });
});
