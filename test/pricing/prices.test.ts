import { describe, expect, it } from 'vitest';
import { PricesSchema } from '../../src/config/prices.js';
import { costOf, formatCost, roundCost } from '../../src/pricing/cost.js';
import { modelIdForms, normalModelId } from '../../src/pricing/model-id.js';
import { DEFAULT_PRICES, PriceTable } from '../../src/pricing/prices.js';
import { parseBootstrap } from '../../src/config/bootstrap.js';
import { defaultProviders, ProviderRegistry } from '../../src/providers/registry.js';

describe('price table', () => {
  const table = new PriceTable();

  it('finds models as given, with their date or version suffix removed, and Bedrock cross-region ids', () => {
    expect(table.lookup('openai', 'gpt-4o-mini')).toEqual({ input: 0.15, cached_input: 0.075, output: 0.6 });
    expect(table.lookup('openai', 'gpt-4o-mini-2024-07-18')).toEqual(table.lookup('openai', 'gpt-4o-mini'));
    expect(table.lookup('openai', 'gpt-4o-2024-08-06')?.input).toBe(2.5);
    expect(table.lookup('anthropic', 'claude-3-5-sonnet-20241022')?.output).toBe(15);
    expect(table.lookup('anthropic', 'claude-opus-4-1-20250805')?.input).toBe(15);
    expect(table.lookup('anthropic', 'claude-sonnet-4-20250514')?.cache_write_input).toBe(3.75);
    expect(table.lookup('bedrock', 'us.anthropic.claude-3-7-sonnet-20250219-v1:0')?.input).toBe(3);
    expect(table.lookup('bedrock', 'amazon.nova-lite-v1:0')?.output).toBe(0.24);
    expect(table.lookup('vertex-ai', 'gemini-2.0-flash-001')?.input).toBe(0.15);
    expect(table.lookup('azure-openai', 'gpt-4.1')?.output).toBe(8);
  });

  it('one normalisation: lower case, then without region prefix and date or version suffixes, most specific first', () => {
    expect(modelIdForms('GPT-4o-mini-2024-07-18')).toEqual(['gpt-4o-mini-2024-07-18', 'gpt-4o-mini']);
    expect(modelIdForms('us.anthropic.claude-3-7-sonnet-20250219-v1:0')).toEqual([
      'us.anthropic.claude-3-7-sonnet-20250219-v1:0',
      'anthropic.claude-3-7-sonnet-20250219-v1:0',
      'anthropic.claude-3-7-sonnet-20250219',
      'anthropic.claude-3-7-sonnet',
    ]);
    expect(normalModelId('GPT-4o-mini')).toBe('gpt-4o-mini');
    expect(normalModelId('gemini-2.0-flash-001')).toBe('gemini-2.0-flash');
    expect(normalModelId('claude-opus-4-0')).toBe('claude-opus-4-0');
  });

  it('model names without case, in the table and in the lookup', () => {
    expect(table.lookup('openai', 'GPT-4o-Mini')).toEqual(table.lookup('openai', 'gpt-4o-mini'));
    expect(table.lookup('together', 'meta-llama/llama-3.3-70b-instruct-turbo')?.input).toBe(0.88);
    const t = new PriceTable({ openai: { 'GPT-4o-2024-05-13': { input: 5, output: 15 } } });
    // an operator may price one snapshot apart from its family
    expect(t.lookup('openai', 'gpt-4o-2024-05-13')?.input).toBe(5);
    expect(t.lookup('openai', 'gpt-4o-2024-08-06')?.input).toBe(2.5);
    expect(() => parseBootstrap('prices: { openai: { my-model: { input: 1, output: 1 }, My-Model: { input: 2, output: 2 } } }')).toThrow(
      /prices\.openai\.My-Model: names the same model as "my-model"/,
    );
  });

  it('an unknown model, provider or absent model has no price: never a guess', () => {
    expect(table.lookup('openai', 'gpt-unknown')).toBeUndefined();
    expect(table.lookup('openai', 'gpt-4o-mini-audio-preview')).toBeUndefined();
    expect(table.lookup('vllm', 'llama')).toBeUndefined();
    expect(table.lookup('nope', 'gpt-4o')).toBeUndefined();
    expect(table.lookup('openai', undefined)).toBeUndefined();
  });

  it('the bootstrap file overrides an entry whole, adds models and providers, and `*` prices every other model of a provider', () => {
    const bootstrap = parseBootstrap(`
prices:
  openai:
    gpt-4o-mini: { input: 1, output: 2 }
    my-fine-tune: { input: 3, cached_input: 1.5, output: 6 }
  '@vllm':
    '*': { input: 0, output: 0 }
`);
    const registry = new ProviderRegistry(defaultProviders());
    const t = new PriceTable(bootstrap.prices, (n) => registry.get(n).descriptor.id);
    expect(t.lookup('openai', 'gpt-4o-mini')).toEqual({ input: 1, output: 2 });
    expect(t.lookup('openai', 'gpt-4o-mini-2024-07-18')).toEqual({ input: 1, output: 2 });
    expect(t.lookup('openai', 'my-fine-tune')?.cached_input).toBe(1.5);
    expect(t.lookup('openai', 'gpt-4o')?.input).toBe(2.5);
    expect(t.lookup('vllm', 'anything')).toEqual({ input: 0, output: 0 });
    expect(t.lookup('vllm', undefined)).toEqual({ input: 0, output: 0 });
  });

  it('bootstrap prices are validated: a negative or missing price, an unknown field, is refused naming the path', () => {
    expect(() => parseBootstrap('prices: { openai: { m: { input: -1, output: 1 } } }')).toThrow(/prices\.openai\.m\.input: must be 0 or more/);
    expect(() => parseBootstrap('prices: { openai: { m: { input: 1 } } }')).toThrow(/prices\.openai\.m\.output/);
    expect(() => parseBootstrap('prices: { openai: { m: { input: 1, output: 1, per_request: 1 } } }')).toThrow(/prices\.openai\.m/);
    expect(PricesSchema.safeParse(DEFAULT_PRICES).success).toBe(true);
  });

  it('an unknown provider in the bootstrap prices stops the start, naming it', () => {
    const registry = new ProviderRegistry(defaultProviders());
    expect(() => new PriceTable({ nope: { m: { input: 1, output: 1 } } }, (n) => registry.get(n).descriptor.id)).toThrow(/nope/);
  });
});

describe('costOf', () => {
  it('prompt at input, cache reads at cached_input, cache writes at cache_write_input, completion at output (USD per million)', () => {
    const price = { input: 3, cached_input: 0.3, cache_write_input: 3.75, output: 15 };
    const usage = { prompt_tokens: 1_000_000, completion_tokens: 100_000, total_tokens: 1_100_000, prompt_tokens_details: { cached_tokens: 400_000, cache_write_tokens: 100_000 } };
    // 500k plain × 3 + 400k × 0.3 + 100k × 3.75 + 100k × 15
    expect(costOf(usage, price)).toBeCloseTo(1.5 + 0.12 + 0.375 + 1.5, 12);
    // without cache prices, cache tokens are plain input
    expect(costOf(usage, { input: 3, output: 15 })).toBeCloseTo(3 + 1.5, 12);
    expect(costOf({ prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 }, { input: 0.15, output: 0.6 })).toBeCloseTo(0.000009, 15);
  });

  it('rounds a reported cost to the header precision, so the noise of the price arithmetic never reaches the log', () => {
    const raw = costOf({ prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 }, { input: 0.15, output: 0.6 });
    expect(raw).not.toBe(0.00000675); // 6.749999999999999e-6: what the log used to print
    expect(roundCost(raw)).toBe(0.00000675);
    expect(JSON.stringify(roundCost(raw))).toBe('0.00000675');
    expect(roundCost(123.45678912344)).toBe(123.4567891234);
    expect(roundCost(0)).toBe(0);
  });

  it('formats costs in plain decimals, at most 10 places', () => {
    expect(formatCost(0.000009)).toBe('0.000009');
    expect(formatCost(1.5)).toBe('1.5');
    expect(formatCost(1e-12)).toBe('0');
    expect(formatCost(0)).toBe('0');
    expect(formatCost(123.4567891234)).toBe('123.4567891234');
  });
});
