/**
 * The bootstrap file's `context_windows` section: model (or `*`, every model the table does not
 * know) → its context window in tokens, zod-validated. The shipped table these entries override and
 * extend, and how a model id is looked up, are src/pricing/context-windows.ts.
 */
import { z } from 'zod';
import { modelNamesDistinct } from './prices.js';

/** The largest window accepted: beyond any model's, so a typo of a few digits is caught. */
export const CONTEXT_WINDOW_MAX = 100_000_000;

export const ContextWindowsSchema = z
  .record(
    z.string().min(1, 'must not be empty').max(256, 'at most 256 characters'),
    z.number().int('must be a whole number of tokens').min(1, 'must be at least 1 token').max(CONTEXT_WINDOW_MAX, `at most ${CONTEXT_WINDOW_MAX} tokens`),
  )
  .superRefine(modelNamesDistinct);
export type ContextWindowsConfig = z.infer<typeof ContextWindowsSchema>;
