import { z } from 'zod';
import { countOutcome, countWords } from './counting.js';
import { maxAtLeastMin, nonNegInt } from './params.js';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z
  .strictObject({ minWords: nonNegInt.default(0), maxWords: nonNegInt.default(99999) })
  .refine(...maxAtLeastMin<{ minWords: number; maxWords: number }>('minWords', 'maxWords'));
type Params = z.infer<typeof Params>;

const outcome = countOutcome('minWords', 'maxWords', (count, p: Params) => ({ count, minWords: p.minWords, maxWords: p.maxWords }));

/**
 * Passes when the number of words is within [minWords, maxWords] (both included), counted in the
 * latest turn of the request (the last user message, prompt or input) or in the answer.
 */
export const wordCount: CheckDef<Params> = {
  id: 'wordCount',
  params: Params,
  supportsNot: true,
  run(input, p) {
    return outcome(countWords(phaseText(input, 'text')), p);
  },
};
