/** zod pieces shared by check parameter schemas. */
import { z } from 'zod';
import { REDACTED, secret } from '../security/redact.js';
import { compileBoundedRegex } from '../util/bounded-regex.js';

/** A config regex: a string that compiles within the bounds of util/bounded-regex.ts. */
export const regexRule = z.string().superRefine((s, ctx) => {
  try {
    compileBoundedRegex(s, 'rule');
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
  }
});

export const operator = z.enum(['any', 'all', 'none']);
export type Operator = z.infer<typeof operator>;

/** any / all / none over how many of `total` items were found. */
export function byOperator(op: Operator, found: number, total: number): boolean {
  return op === 'any' ? found > 0 : op === 'all' ? found === total : found === 0;
}

export const nonNegInt = z.number().int().min(0);

/** An http(s) URL. */
export const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http: or https: URL' });

/**
 * Extra headers a receiver needs (its own credentials): string values only, each a secret (printed
 * as `[redacted]`, names kept). The placeholder itself is refused: a guardrail read back from the
 * API and sent again must carry the real values, not store the placeholder in their place.
 */
export const headerMap = secret(
  z.record(
    z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'not a header name'),
    z.string().refine((v) => v !== REDACTED, `is the ${REDACTED} placeholder of an answer: send the header's real value`),
  ),
  'header-values',
);

/** Refinement for a min/max pair: max ≥ min (the issue sits on `max`). */
export function maxAtLeastMin<T extends Record<string, unknown>>(
  min: keyof T & string,
  max: keyof T & string,
): [(p: T) => boolean, { message: string; path: string[] }] {
  return [(p) => (p[max] as number) >= (p[min] as number), { message: `${max} must be at least ${min}`, path: [max] }];
}
