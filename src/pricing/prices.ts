/**
 * The price table: what a request's tokens cost, per provider and model, in US dollars per million
 * tokens. Shipped with the gateway (`DEFAULT_PRICES`: the providers' published list prices for their
 * main models, standard tier, as of the date below) and overridden or extended by the bootstrap
 * file's `prices` section (same shape, src/config/prices.ts). A model the table does not know has no
 * price (`PriceTable.lookup` answers undefined), never a guess; what a usage costs is cost.ts.
 */
import type { Price, Prices } from '../config/prices.js';
import { modelIdForms } from './model-id.js';

/** When the shipped list prices were last checked against the providers' pages. */
export const PRICES_AS_OF = '2025-11';

const p = (input: number, output: number, cached_input?: number, cache_write_input?: number): Price => {
  const out: Price = { input, output };
  if (cached_input !== undefined) out.cached_input = cached_input;
  if (cache_write_input !== undefined) out.cache_write_input = cache_write_input;
  return out;
};

const OPENAI: Record<string, Price> = {
  'gpt-5': p(1.25, 10, 0.125),
  'gpt-5-mini': p(0.25, 2, 0.025),
  'gpt-5-nano': p(0.05, 0.4, 0.005),
  'gpt-4.1': p(2, 8, 0.5),
  'gpt-4.1-mini': p(0.4, 1.6, 0.1),
  'gpt-4.1-nano': p(0.1, 0.4, 0.025),
  'gpt-4o': p(2.5, 10, 1.25),
  'gpt-4o-mini': p(0.15, 0.6, 0.075),
  o1: p(15, 60, 7.5),
  'o1-mini': p(1.1, 4.4, 0.55),
  o3: p(2, 8, 0.5),
  'o3-mini': p(1.1, 4.4, 0.55),
  'o4-mini': p(1.1, 4.4, 0.275),
  'gpt-4-turbo': p(10, 30),
  'gpt-4': p(30, 60),
  'gpt-3.5-turbo': p(0.5, 1.5),
  'gpt-3.5-turbo-instruct': p(1.5, 2),
  'text-embedding-3-small': p(0.02, 0),
  'text-embedding-3-large': p(0.13, 0),
  'text-embedding-ada-002': p(0.1, 0),
};

/** Anthropic's models; cache writes are the 5-minute cache's price (1.25 × input). */
const ANTHROPIC_MODELS: Record<string, Price> = {
  'claude-opus-4-5': p(5, 25, 0.5, 6.25),
  'claude-opus-4-1': p(15, 75, 1.5, 18.75),
  'claude-opus-4': p(15, 75, 1.5, 18.75),
  'claude-sonnet-4-5': p(3, 15, 0.3, 3.75),
  'claude-sonnet-4': p(3, 15, 0.3, 3.75),
  'claude-haiku-4-5': p(1, 5, 0.1, 1.25),
  'claude-3-7-sonnet': p(3, 15, 0.3, 3.75),
  'claude-3-5-sonnet': p(3, 15, 0.3, 3.75),
  'claude-3-5-haiku': p(0.8, 4, 0.08, 1),
  'claude-3-opus': p(15, 75, 1.5, 18.75),
  'claude-3-haiku': p(0.25, 1.25, 0.03, 0.3),
};
const ANTHROPIC: Record<string, Price> = {
  ...ANTHROPIC_MODELS,
  'claude-opus-4-0': ANTHROPIC_MODELS['claude-opus-4']!,
  'claude-sonnet-4-0': ANTHROPIC_MODELS['claude-sonnet-4']!,
  'claude-3-7-sonnet-latest': ANTHROPIC_MODELS['claude-3-7-sonnet']!,
  'claude-3-5-sonnet-latest': ANTHROPIC_MODELS['claude-3-5-sonnet']!,
  'claude-3-5-haiku-latest': ANTHROPIC_MODELS['claude-3-5-haiku']!,
  'claude-3-opus-latest': ANTHROPIC_MODELS['claude-3-opus']!,
};

/** Bedrock on-demand, us-east-1 (model ids without their `-vN:M` version; cross-region `us.` / `eu.` prefixes are removed). */
const BEDROCK: Record<string, Price> = {
  'anthropic.claude-opus-4-1': ANTHROPIC_MODELS['claude-opus-4-1']!,
  'anthropic.claude-opus-4': ANTHROPIC_MODELS['claude-opus-4']!,
  'anthropic.claude-sonnet-4-5': ANTHROPIC_MODELS['claude-sonnet-4-5']!,
  'anthropic.claude-sonnet-4': ANTHROPIC_MODELS['claude-sonnet-4']!,
  'anthropic.claude-haiku-4-5': ANTHROPIC_MODELS['claude-haiku-4-5']!,
  'anthropic.claude-3-7-sonnet': ANTHROPIC_MODELS['claude-3-7-sonnet']!,
  'anthropic.claude-3-5-sonnet': p(3, 15),
  'anthropic.claude-3-5-haiku': p(0.8, 4),
  'anthropic.claude-3-haiku': p(0.25, 1.25),
  'amazon.nova-premier': p(2.5, 12.5),
  'amazon.nova-pro': p(0.8, 3.2, 0.2),
  'amazon.nova-lite': p(0.06, 0.24, 0.015),
  'amazon.nova-micro': p(0.035, 0.14, 0.00875),
  'meta.llama3-3-70b-instruct': p(0.72, 0.72),
  'meta.llama3-1-70b-instruct': p(0.72, 0.72),
  'meta.llama3-1-8b-instruct': p(0.22, 0.22),
  'mistral.mistral-large-2407': p(2, 6),
  'amazon.titan-embed-text': p(0.02, 0),
};

/** Vertex AI, Gemini (prompts up to 200k tokens; longer prompts cost more: override when that matters). */
const VERTEX: Record<string, Price> = {
  'gemini-2.5-pro': p(1.25, 10, 0.125),
  'gemini-2.5-flash': p(0.3, 2.5, 0.03),
  'gemini-2.5-flash-lite': p(0.1, 0.4, 0.01),
  'gemini-2.0-flash': p(0.15, 0.6, 0.0375),
  'gemini-2.0-flash-lite': p(0.075, 0.3),
};

export const DEFAULT_PRICES: Readonly<Record<string, Readonly<Record<string, Price>>>> = {
  openai: OPENAI,
  // Azure OpenAI's global standard deployments cost what OpenAI's models do; a deployment whose
  // request `model` is its own alias needs a `prices` entry under that alias.
  'azure-openai': OPENAI,
  anthropic: ANTHROPIC,
  bedrock: BEDROCK,
  'vertex-ai': VERTEX,
  groq: {
    'llama-3.3-70b-versatile': p(0.59, 0.79),
    'llama-3.1-8b-instant': p(0.05, 0.08),
    'openai/gpt-oss-120b': p(0.15, 0.75),
    'openai/gpt-oss-20b': p(0.1, 0.5),
  },
  mistral: {
    'mistral-large-latest': p(2, 6),
    'mistral-medium-latest': p(0.4, 2),
    'mistral-small-latest': p(0.1, 0.3),
    'codestral-latest': p(0.3, 0.9),
    'ministral-8b-latest': p(0.1, 0.1),
    'open-mistral-nemo': p(0.15, 0.15),
    'mistral-embed': p(0.1, 0),
  },
  deepseek: {
    'deepseek-chat': p(0.28, 0.42, 0.028),
    'deepseek-reasoner': p(0.28, 0.42, 0.028),
  },
  together: {
    'meta-llama/Llama-3.3-70B-Instruct-Turbo': p(0.88, 0.88),
    'meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo': p(0.18, 0.18),
    'deepseek-ai/DeepSeek-V3': p(1.25, 1.25),
  },
  fireworks: {
    'accounts/fireworks/models/llama-v3p3-70b-instruct': p(0.9, 0.9),
    'accounts/fireworks/models/llama-v3p1-8b-instruct': p(0.2, 0.2),
  },
  xai: {
    'grok-4': p(3, 15, 0.75),
    'grok-3': p(3, 15, 0.75),
    'grok-3-mini': p(0.3, 0.5, 0.075),
  },
  perplexity: {
    sonar: p(1, 1),
    'sonar-pro': p(3, 15),
  },
  cerebras: {
    'llama3.1-8b': p(0.1, 0.1),
    'llama-3.3-70b': p(0.85, 1.2),
    'gpt-oss-120b': p(0.25, 0.69),
  },
};

/** The prices of one provider: its exact models, and the `*` entry for every other one. */
interface ProviderPrices {
  models: Map<string, Price>;
  wildcard?: Price;
  /** Model id → what it resolved to (a price, or null for none); bounded. */
  resolved: Map<string, Price | null>;
}

const RESOLVED_MAX = 1000;

/**
 * The shipped table with the operator's entries over it (an operator entry replaces the shipped
 * entry of that provider and model whole). Model names are compared without case. A lookup tries
 * each of the model id's forms (`modelIdForms`: as given, then without its region prefix and its
 * date or version suffixes, so an operator may price one snapshot apart from its family), then the
 * provider's `*` entry. Results are remembered per model id, so a request pays one Map lookup.
 */
export class PriceTable {
  private readonly providers = new Map<string, ProviderPrices>();

  /**
   * `canonical` maps a provider name of the bootstrap file to its registry id (aliases allowed);
   * it throws on an unknown one, naming it.
   */
  constructor(overrides: Prices = {}, canonical: (name: string) => string = (n) => n, defaults = DEFAULT_PRICES) {
    for (const [provider, models] of Object.entries(defaults)) this.add(provider, models);
    for (const [provider, models] of Object.entries(overrides)) this.add(canonical(provider), models);
  }

  private add(provider: string, models: Readonly<Record<string, Price>>): void {
    let pp = this.providers.get(provider);
    if (!pp) {
      pp = { models: new Map(), resolved: new Map() };
      this.providers.set(provider, pp);
    }
    for (const [model, price] of Object.entries(models)) {
      if (model === '*') pp.wildcard = price;
      else pp.models.set(model.toLowerCase(), price);
    }
    pp.resolved.clear();
  }

  /** The price of `model` at `provider` (a registry id), or undefined when the table has none. */
  lookup(provider: string, model: string | undefined): Price | undefined {
    const pp = this.providers.get(provider);
    if (!pp) return undefined;
    if (model === undefined) return pp.wildcard;
    const hit = pp.resolved.get(model);
    if (hit !== undefined) return hit ?? undefined;
    const found = resolve(pp, model) ?? pp.wildcard;
    if (pp.resolved.size >= RESOLVED_MAX) pp.resolved.clear();
    pp.resolved.set(model, found ?? null);
    return found;
  }
}

function resolve(pp: ProviderPrices, model: string): Price | undefined {
  for (const form of modelIdForms(model)) {
    const price = pp.models.get(form);
    if (price) return price;
  }
  return undefined;
}
