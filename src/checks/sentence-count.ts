import { z } from 'zod';
import { countOutcome, countSentences } from './counting.js';
import { maxAtLeastMin, nonNegInt } from './params.js';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z
  .strictObject({ minSentences: nonNegInt.default(0), maxSentences: nonNegInt.default(99999) })
  .refine(...maxAtLeastMin<{ minSentences: number; maxSentences: number }>('minSentences', 'maxSentences'));
type Params = z.infer<typeof Params>;

const outcome = countOutcome('minSentences', 'maxSentences', (count, p: Params) => ({ count, minSentences: p.minSentences, maxSentences: p.maxSentences }));

/**
 * Passes when the number of sentences is within [minSentences, maxSentences] (both included), counted in the
 * latest turn of the request (the last user message, prompt or input) or in the answer.
 */
export const sentenceCount: CheckDef<Params> = {
  id: 'sentenceCount',
  params: Params,
  supportsNot: true,
  run(input, p) {
    return outcome(countSentences(phaseText(input, 'text')), p);
  },
};
