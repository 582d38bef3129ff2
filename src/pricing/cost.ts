/** What a usage costs at a price, and a cost as the gateway reports it. */
import type { Price } from '../config/prices.js';
import type { Usage } from '../config/wire.js';

/**
 * What `usage` costs at `price`, in USD: prompt tokens not read from or written to the provider's
 * prompt cache at `input`, cache reads at `cached_input`, cache writes at `cache_write_input` (each
 * defaulting to `input`), completion tokens at `output`. Pure.
 */
export function costOf(usage: Usage, price: Price): number {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage.prompt_tokens_details?.cache_write_tokens ?? 0;
  const plain = Math.max(0, usage.prompt_tokens - cached - written);
  const micro =
    plain * price.input +
    cached * (price.cached_input ?? price.input) +
    written * (price.cache_write_input ?? price.input) +
    usage.completion_tokens * price.output;
  return micro / 1e6;
}

/**
 * A request's cost as the gateway reports it (the log's `cost`, the `x-gateway-cost` header): USD
 * rounded to 10 decimal places, the header's precision, so the binary noise of the price arithmetic
 * (6.749999999999999e-6 for 6.75e-6) never reaches a log line.
 */
export const roundCost = (usd: number): number => Math.round(usd * 1e10) / 1e10;

/**
 * A cost as the `x-gateway-cost` header writes it: USD, plain decimal notation (never an
 * exponent), at most 10 decimal places, trailing zeros removed.
 */
export function formatCost(usd: number): string {
  if (!(usd > 0)) return '0';
  const s = usd.toFixed(10);
  return s.replace(/\.?0+$/, '');
}
