import { describe, expect, it } from 'vitest';
import { embedLocal, LOCAL_EMBEDDING_DIMS, promptText } from '../../src/cache/local-embedder.js';

const cosine = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};
const norm = (a: Float32Array): number => Math.sqrt(cosine(a, a));

describe('embedLocal', () => {
  it('is deterministic', () => {
    const t = 'What is the capital of France?';
    expect(Array.from(embedLocal(t))).toEqual(Array.from(embedLocal(t)));
  });

  it('has the default dimensions and unit length', () => {
    const v = embedLocal('The quick brown fox jumps over the lazy dog');
    expect(v).toHaveLength(LOCAL_EMBEDDING_DIMS);
    expect(norm(v)).toBeCloseTo(1, 5);
    expect(embedLocal('hello', 64)).toHaveLength(64);
    expect(norm(embedLocal('hello', 64))).toBeCloseTo(1, 5);
  });

  it('ignores case and punctuation', () => {
    expect(cosine(embedLocal('Hello, World!'), embedLocal('hello world'))).toBeCloseTo(1, 5);
  });

  // Lexical: a changed word takes its trigrams and two bigrams with it, so very short sentences with a
  // long changed word sit near 0.8 (e.g. 7 words, "green" → "tropical": 0.79); prompts of ordinary length are above.
  it('gives similar sentences (one word changed) a cosine above 0.8', () => {
    const pairs: [string, string][] = [
      ['What is the capital city of France?', 'What is the capital city of Germany?'],
      ['Explain in simple terms how photosynthesis works in green plants', 'Explain in simple terms how photosynthesis works in tropical plants'],
      ['Write a short poem about the sea at night', 'Write a short poem about the sea at dawn'],
      ['user: How do I reverse a linked list in Python?', 'user: How do I reverse a linked list in Java?'],
    ];
    for (const [a, b] of pairs) expect(cosine(embedLocal(a), embedLocal(b))).toBeGreaterThan(0.8);
  });

  it('gives unrelated sentences a cosine below 0.3', () => {
    const pairs: [string, string][] = [
      ['What is the capital city of France?', 'Recommend a good recipe for banana bread'],
      ['Explain how photosynthesis works in green plants', 'My laptop battery drains quickly overnight'],
    ];
    for (const [a, b] of pairs) expect(Math.abs(cosine(embedLocal(a), embedLocal(b)))).toBeLessThan(0.3);
  });

  it('gives a zero vector for empty or symbol-only text (no NaN)', () => {
    for (const t of ['', '   ', '?!...']) {
      const v = embedLocal(t);
      expect(v).toHaveLength(LOCAL_EMBEDDING_DIMS);
      expect(Array.from(v).every((x) => x === 0)).toBe(true);
    }
  });
});

describe('promptText', () => {
  it('skips system and developer messages and labels the rest by role', () => {
    expect(
      promptText({
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'developer', content: 'Be nice.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
          { role: 'user', content: 'Bye' },
        ],
      }),
    ).toBe('user: Hi\nassistant: Hello\nuser: Bye');
  });

  it('a different system prompt gives the same text', () => {
    const msgs = (sys: string) => ({ messages: [{ role: 'system', content: sys }, { role: 'user', content: 'Q' }] });
    expect(promptText(msgs('A'))).toBe(promptText(msgs('B')));
  });

  it('takes the text parts of content arrays and skips the others', () => {
    expect(
      promptText({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Describe' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
              { type: 'text', text: 'this image' },
            ],
          },
        ],
      }),
    ).toBe('user: Describe\nuser: this image');
  });

  it('returns undefined when only system messages or no text', () => {
    expect(promptText({ messages: [{ role: 'system', content: 'S' }] })).toBeUndefined();
    expect(promptText({ messages: [] })).toBeUndefined();
    expect(promptText({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] })).toBeUndefined();
    expect(promptText({ model: 'm' })).toBeUndefined();
    expect(promptText(undefined)).toBeUndefined();
  });

  it('takes a completions prompt as a string or an array of strings', () => {
    expect(promptText({ prompt: 'Once upon' })).toBe('Once upon');
    expect(promptText({ prompt: ['a', 'b'] })).toBe('a\nb');
    expect(promptText({ prompt: [1, 2, 3] })).toBeUndefined();
    expect(promptText({ prompt: [[1, 2]] })).toBeUndefined();
  });
});
