import { describe, expect, it } from 'vitest';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { parseBootstrap } from '../../src/config/bootstrap.js';
import { ContextWindows } from '../../src/pricing/context-windows.js';
import { encodingFor, FILE_TOKENS, fixedTokens, itemTokens, tokenizerCounter, utf8Bytes } from '../../src/pricing/input-tokens.js';
import { textTokens } from '../../src/pricing/usage-estimate.js';

describe('context window table', () => {
  const table = new ContextWindows();

  it('finds a model as given, by its family without date or version, on any provider', () => {
    expect(table.lookup('gpt-4o-mini')).toBe(128_000);
    expect(table.lookup('GPT-4o-mini-2024-07-18')).toBe(128_000);
    expect(table.lookup('gpt-4.1')).toBe(1_047_576);
    expect(table.lookup('claude-sonnet-4-5-20250929')).toBe(200_000);
    expect(table.lookup('claude-sonnet-4-5@20250929')).toBe(200_000);
    expect(table.lookup('us.anthropic.claude-3-7-sonnet-20250219-v1:0')).toBe(200_000);
    expect(table.lookup('gemini-2.0-flash-001')).toBe(1_048_576);
  });

  it('an unknown model has no window unless the operator sets `*`', () => {
    expect(table.lookup('my-local-llama')).toBeUndefined();
    const withDefault = new ContextWindows({ '*': 8192 });
    expect(withDefault.lookup('my-local-llama')).toBe(8192);
    expect(withDefault.lookup('gpt-4o')).toBe(128_000);
  });

  it('the bootstrap file overrides and extends the table, names compared without case', () => {
    const b = parseBootstrap('context_windows:\n  GPT-4o: 64000\n  my-llama: 4096\n  "*": 32768\n');
    const t = new ContextWindows(b.context_windows);
    expect(t.lookup('gpt-4o-2024-08-06')).toBe(64_000);
    expect(t.lookup('my-llama')).toBe(4096);
    expect(t.lookup('other')).toBe(32_768);
  });

  it('a bad entry stops the start, naming it', () => {
    expect(() => parseBootstrap('context_windows:\n  gpt-4o: 0\n')).toThrow(/context_windows\.gpt-4o: must be at least 1 token/);
    expect(() => parseBootstrap('context_windows:\n  gpt-4o: 1.5\n')).toThrow(/context_windows\.gpt-4o: must be a whole number/);
    expect(() => parseBootstrap('context_windows:\n  gpt-4o: lots\n')).toThrow(/context_windows\.gpt-4o/);
    expect(() => parseBootstrap('context_windows:\n  a: 5\n  A: 6\n')).toThrow(/context_windows\.A: names the same model as "a"/);
    expect(() => parseBootstrap('context_windows:\n  x: 1000000000\n')).toThrow(/context_windows\.x: at most 100000000 tokens/);
  });
});

describe('input tokens', () => {
  it('the encoding by model: o200k for gpt-4o, 4.1, 5 and the o-series, cl100k for older, none for others', () => {
    for (const m of ['gpt-4o', 'gpt-4o-mini-2024-07-18', 'gpt-4.1-nano', 'gpt-5', 'o1', 'o3-mini', 'o4-mini', 'gpt-oss-120b']) expect(encodingFor(m)).toBe('o200k_base');
    for (const m of ['gpt-4', 'gpt-4-turbo', 'gpt-3.5-turbo-0125']) expect(encodingFor(m)).toBe('cl100k_base');
    for (const m of ['claude-sonnet-4-5', 'llama3', 'gemini-2.5-pro']) expect(encodingFor(m)).toBeUndefined();
  });

  it("counts text with the model's tokenizer, special-token text as text", () => {
    const text = 'The quick brown fox <|endoftext|> jumps over the lazy dog.';
    expect(tokenizerCounter('o200k_base')(text)).toBe(countTokens(text, { disallowedSpecial: new Set() }));
    expect(tokenizerCounter('cl100k_base')(text)).toBe(countCl100k(text, { disallowedSpecial: new Set() }));
  });

  it('long text is read in pieces cut at white space: the same count as in one go', () => {
    const prose = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(200);
    expect(tokenizerCounter('o200k_base')(prose)).toBe(countTokens(prose));
  });

  it('bounded: a run without breaks is cut, and past the character budget the estimate counts', () => {
    const run = 'a'.repeat(1_000_000);
    const count = tokenizerCounter('o200k_base', 4096);
    // over the budget: the estimate, without tokenizing
    expect(count(run)).toBe(textTokens(run));
    // within it: cut into pieces, a count near the tokenizer's
    const n = count('a'.repeat(4096));
    expect(n).toBeGreaterThanOrEqual(countTokens('a'.repeat(4096)));
    expect(n).toBeLessThanOrEqual(countTokens('a'.repeat(4096)) + 4);
  });

  it('items: 4 tokens of framing plus their text; images by tiles, files a fixed amount', () => {
    const est = textTokens;
    expect(itemTokens({ role: 'user', content: 'abcdefgh' }, est)).toBe(4 + 2);
    expect(itemTokens({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'abcd' }, { type: 'input_image', image_url: 'https://x/y.png' }] }, est)).toBe(4 + 1 + 85 + 170 * 8);
    expect(itemTokens({ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png', detail: 'low' }] }, est)).toBe(4 + 85);
    expect(itemTokens({ role: 'user', content: [{ type: 'input_file', file_data: 'x'.repeat(100_000) }] }, est)).toBe(4 + FILE_TOKENS);
    expect(itemTokens({ type: 'function_call', call_id: 'c', name: 'abcd', arguments: '{"a":1}' }, est)).toBe(4 + 1 + 2);
    expect(itemTokens({ type: 'function_call_output', call_id: 'c', output: 'abcdabcd' }, est)).toBe(4 + 2);
    expect(fixedTokens({ instructions: 'abcd', tools: [], text: { format: { type: 'text' } } }, est)).toBe(4 + 1);
  });

  it('the UTF-8 bound is never below the tokenizer', () => {
    for (const s of ['hello world', 'Grüße aus Köln', '日本語のテキスト', 'x'.repeat(3000)]) {
      expect(utf8Bytes(s)).toBeGreaterThanOrEqual(countTokens(s));
    }
  });
});
