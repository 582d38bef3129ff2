/**
 * The bootstrap file's `context_windows` section: model (or `*`, every model the table does not
 * know) → its context window in tokens, zod-validated. The shipped table these entries override and
 * extend, and how a model id is looked up, are src/pricing/context-windows.ts.
 */
import { z } from 'zod';

/** The largest window accepted: beyond any model's, so a typo of a few digits is caught. */
export const CONTEXT_WINDOW_MAX = 100_000_000;

export const ContextWindowsSchema = z
  .record(
    z.string().min(1, 'must not be empty').max(256, 'at most 256 characters'),
    z.number().int('must be a whole number of tokens').min(1, 'must be at least 1 token').max(CONTEXT_WINDOW_MAX, `at most ${CONTEXT_WINDOW_MAX} tokens`),
  )
  .superRefine((models, ctx) => {
    // Model names are looked up without case: two entries that differ only in case would be one.
    const seen = new Map<string, string>();
    for (const name of Object.keys(models)) {
      const lower = name.toLowerCase();
      const other = seen.get(lower);
      if (other !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: `names the same model as "${other}" (model names are compared without case)` });
      seen.set(lower, name);
    }
  });
export type ContextWindowsConfig = z.infer<typeof ContextWindowsSchema>;
