import { z } from 'zod';
import { countOutcome, countCharacters } from './counting.js';
import { maxAtLeastMin, nonNegInt } from './params.js';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z
  .strictObject({ minCharacters: nonNegInt.default(0), maxCharacters: nonNegInt.default(9999999) })
  .refine(...maxAtLeastMin<{ minCharacters: number; maxCharacters: number }>('minCharacters', 'maxCharacters'));
type Params = z.infer<typeof Params>;

const outcome = countOutcome('minCharacters', 'maxCharacters', (count, p: Params) => ({ count, minCharacters: p.minCharacters, maxCharacters: p.maxCharacters }));

/**
 * Passes when the number of characters is within [minCharacters, maxCharacters] (both included), counted in the
 * latest turn of the request (the last user message, prompt or input) or in the answer.
 */
export const characterCount: CheckDef<Params> = {
  id: 'characterCount',
  params: Params,
  supportsNot: true,
  run(input, p) {
    return outcome(countCharacters(phaseText(input, 'text')), p);
  },
};
