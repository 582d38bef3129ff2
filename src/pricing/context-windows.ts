/**
 * The context window table: how many tokens (input and output together) a model takes, by model id
 * whatever the provider. Shipped with the gateway (`DEFAULT_CONTEXT_WINDOWS`: the providers'
 * published windows for their main models, as of the date below) and overridden or extended by the
 * bootstrap file's `context_windows` section (src/config/context-windows.ts), whose `*` entry is the
 * window of every model the table does not know. Without it such a model has no window (`lookup`
 * answers undefined) and the Responses API's truncation rule skips it (src/providers/context-fit.ts).
 */
import type { ContextWindowsConfig } from '../config/context-windows.js';
import { modelIdForms } from './model-id.js';

/** When the shipped windows were last checked against the providers' pages. */
export const CONTEXT_WINDOWS_AS_OF = '2025-11';

const CLAUDE: Record<string, number> = {
  'claude-opus-4-5': 200_000,
  'claude-opus-4-1': 200_000,
  'claude-opus-4': 200_000,
  'claude-sonnet-4-5': 200_000,
  'claude-sonnet-4': 200_000,
  'claude-haiku-4-5': 200_000,
  'claude-3-7-sonnet': 200_000,
  'claude-3-5-sonnet': 200_000,
  'claude-3-5-haiku': 200_000,
  'claude-3-opus': 200_000,
  'claude-3-haiku': 200_000,
};

/** Bedrock names Claude `anthropic.<model>`; the version suffix and region prefix are model-id forms. */
const BEDROCK_CLAUDE = Object.fromEntries(Object.entries(CLAUDE).map(([m, w]) => [`anthropic.${m}`, w]));

export const DEFAULT_CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  // OpenAI (and Azure OpenAI deployments named after the model)
  'gpt-5': 400_000,
  'gpt-5-mini': 400_000,
  'gpt-5-nano': 400_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  o1: 200_000,
  'o1-mini': 128_000,
  o3: 200_000,
  'o3-mini': 200_000,
  'o4-mini': 200_000,
  'gpt-4-turbo': 128_000,
  'gpt-4': 8_192,
  'gpt-3.5-turbo': 16_385,
  ...CLAUDE,
  ...BEDROCK_CLAUDE,
  'amazon.nova-premier': 1_000_000,
  'amazon.nova-pro': 300_000,
  'amazon.nova-lite': 300_000,
  'amazon.nova-micro': 128_000,
  'meta.llama3-3-70b-instruct': 128_000,
  'meta.llama3-1-70b-instruct': 128_000,
  'meta.llama3-1-8b-instruct': 128_000,
  'mistral.mistral-large-2407': 128_000,
  'gemini-2.5-pro': 1_048_576,
  'gemini-2.5-flash': 1_048_576,
  'gemini-2.5-flash-lite': 1_048_576,
  'gemini-2.0-flash': 1_048_576,
  'gemini-2.0-flash-lite': 1_048_576,
  'llama-3.3-70b-versatile': 131_072,
  'llama-3.1-8b-instant': 131_072,
  'openai/gpt-oss-120b': 131_072,
  'openai/gpt-oss-20b': 131_072,
  'mistral-large-latest': 131_072,
  'mistral-medium-latest': 131_072,
  'mistral-small-latest': 131_072,
  'codestral-latest': 256_000,
  'ministral-8b-latest': 131_072,
  'open-mistral-nemo': 131_072,
  'deepseek-chat': 128_000,
  'deepseek-reasoner': 128_000,
  'grok-4': 256_000,
  'grok-3': 131_072,
  'grok-3-mini': 131_072,
};

const RESOLVED_MAX = 1000;

/**
 * The shipped table with the operator's entries over it (an operator entry replaces the shipped one
 * of that model). Model names are compared without case; a lookup tries each of the model id's forms
 * (`modelIdForms`: as given, then without its region prefix and its date or version suffixes), then
 * the operator's `*` entry. Results are remembered per model id, bounded.
 */
export class ContextWindows {
  private readonly models = new Map<string, number>();
  private readonly fallback: number | undefined;
  private readonly resolved = new Map<string, number | null>();

  constructor(overrides: ContextWindowsConfig = {}, defaults: Readonly<Record<string, number>> = DEFAULT_CONTEXT_WINDOWS) {
    for (const [model, tokens] of Object.entries(defaults)) this.models.set(model.toLowerCase(), tokens);
    let fallback: number | undefined;
    for (const [model, tokens] of Object.entries(overrides)) {
      if (model === '*') fallback = tokens;
      else this.models.set(model.toLowerCase(), tokens);
    }
    this.fallback = fallback;
  }

  /** The context window of `model` in tokens, or undefined when neither the table nor a `*` entry has one. */
  lookup(model: string): number | undefined {
    const hit = this.resolved.get(model);
    if (hit !== undefined) return hit ?? undefined;
    let found: number | undefined;
    for (const form of modelIdForms(model)) {
      found = this.models.get(form);
      if (found !== undefined) break;
    }
    found ??= this.fallback;
    if (this.resolved.size >= RESOLVED_MAX) this.resolved.clear();
    this.resolved.set(model, found ?? null);
    return found;
  }
}
