import { describe, expect, it } from 'vitest';
import { DEFAULT_OUTPUT_TOKENS, estimateTokens, MEDIA_PART_TOKENS, textTokens } from '../../src/config/usage-estimate.js';

describe('request estimate', () => {
  it('text: a quarter of its UTF-8 bytes, rounded up', () => {
    expect(textTokens('')).toBe(0);
    expect(textTokens('hi')).toBe(1);
    expect(textTokens('hello world, how are you?')).toBe(7); // 25 bytes
    expect(textTokens('你好世界')).toBe(3); // 4 characters × 3 bytes
    expect(textTokens('привет')).toBe(3); // 6 × 2 bytes
  });

  it('chat: messages (4 each + text), non-text parts, tool-call arguments, tools; output max_completion_tokens, max_tokens or the default, times n', () => {
    const messages = [
      { role: 'system', content: 'be brief' }, // 4 + 2
      { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'x' } }] }, // 4 + 4 + 1000
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'look', arguments: '{"q":"x"}' } }] }, // 4 + 1 + 3
    ];
    expect(estimateTokens('chat', { model: 'm', messages })).toEqual({ input: 4 + 2 + 4 + 4 + MEDIA_PART_TOKENS + 4 + 1 + 3, output: DEFAULT_OUTPUT_TOKENS });
    expect(estimateTokens('chat', { messages: [], max_tokens: 50, n: 3 }).output).toBe(150);
    expect(estimateTokens('chat', { messages: [], max_tokens: 50, max_completion_tokens: 70 }).output).toBe(70);
    // a target's override_params win
    expect(estimateTokens('chat', { messages: [], max_tokens: 50 }, { max_tokens: 20 }).output).toBe(20);
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    expect(estimateTokens('chat', { messages: [], tools }).input).toBe(Math.ceil(JSON.stringify(tools).length / 4));
  });

  it('completions: the prompt (token ids exactly), output max_tokens (16 by default) × max(n, best_of); embeddings: input only', () => {
    expect(estimateTokens('completions', { prompt: 'say hello' })).toEqual({ input: 3, output: 16 });
    expect(estimateTokens('completions', { prompt: [1, 2, 3, 4], max_tokens: 5, n: 2, best_of: 3 })).toEqual({ input: 4, output: 15 });
    expect(estimateTokens('completions', { prompt: [[1, 2], [3]] })).toEqual({ input: 3, output: 16 });
    expect(estimateTokens('embeddings', { input: ['abcd', 'efgh'] })).toEqual({ input: 2, output: 0 });
    expect(estimateTokens('models', undefined)).toEqual({ input: 0, output: 0 });
  });
});
