/** Pieces the config schemas (schema.ts, hook-schemas.ts) share. */
import { z } from 'zod';

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** An HTTP status code as an integer. */
export const StatusCode = z
  .number()
  .int('status codes must be integers')
  .min(100, 'status codes must be between 100 and 599')
  .max(599, 'status codes must be between 100 and 599');

export const StatusCodes = z.array(StatusCode);

/** retry.on_status_codes: configs written for other gateways give numbers or strings; take both. */
export const LooseStatusCode = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
  z
    .number({ error: 'status codes must be integers or strings of digits such as "429"' })
    .int('status codes must be integers')
    .min(100, 'status codes must be between 100 and 599')
    .max(599, 'status codes must be between 100 and 599'),
);

export const JsonObject = z.record(z.string(), z.unknown());

/**
 * A string or an object, each checked by its own schema so that a bad object field keeps its path
 * (a plain z.union would fold it into one `invalid_union` issue at the item).
 */
export function stringOrObject<S extends z.ZodType<string>, O extends z.ZodType>(str: S, obj: O) {
  return z.unknown().transform((value, ctx): z.output<S> | z.output<O> => {
    if (typeof value !== 'string' && !isPlainObject(value)) {
      ctx.addIssue({ code: 'custom', message: 'expected a string or an object', input: value });
      return z.NEVER;
    }
    const r = (typeof value === 'string' ? str : obj).safeParse(value);
    if (r.success) return r.data as z.output<S> | z.output<O>;
    for (const issue of r.error.issues) {
      // Paths are relative here; the parents prefix their own keys as the issue bubbles up.
      ctx.addIssue({ ...issue, input: value } as Parameters<typeof ctx.addIssue>[0]);
    }
    return z.NEVER;
  });
}
