/**
 * The bootstrap file's `prices` section: provider → model (or `*`) → price, in US dollars per million
 * tokens, zod-validated. The table these entries override and extend, and what a usage costs, are
 * src/pricing/.
 */
import { z } from 'zod';

/** One model's prices, USD per million tokens. */
export interface Price {
  /** Prompt tokens (not served from the provider's prompt cache). */
  input: number;
  /** Prompt tokens read from the provider's prompt cache; absent: `input`. */
  cached_input?: number;
  /** Prompt tokens written to the provider's prompt cache (Anthropic, Bedrock); absent: `input`. */
  cache_write_input?: number;
  /** Completion tokens (reasoning tokens included, as providers count them). */
  output: number;
}

const usd = z.number().finite().min(0, 'must be 0 or more (USD per million tokens)');

export const PriceSchema = z.strictObject({
  input: usd,
  cached_input: usd.optional(),
  cache_write_input: usd.optional(),
  output: usd,
});

/**
 * A zod refinement of a record keyed by model name: model names are looked up without case, so two
 * entries that differ only in case would be one; the second is an issue naming the first.
 */
export function modelNamesDistinct(models: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const seen = new Map<string, string>();
  for (const name of Object.keys(models)) {
    const lower = name.toLowerCase();
    const other = seen.get(lower);
    if (other !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: `names the same model as "${other}" (model names are compared without case)` });
    seen.set(lower, name);
  }
}

/** Bootstrap `prices`: provider → model (or `*`, every other model of that provider) → price. */
export const PricesSchema = z.record(
  z.string().min(1, 'must not be empty'),
  z
    .record(z.string().min(1, 'must not be empty').max(256, 'at most 256 characters'), PriceSchema)
    .superRefine(modelNamesDistinct),
);
export type Prices = z.infer<typeof PricesSchema>;
