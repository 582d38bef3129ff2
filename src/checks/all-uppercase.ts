import { z } from 'zod';
import { countCased } from './counting.js';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({});
type Params = z.infer<typeof Params>;

/** Passes when no cased letter of the text (the answer, or the latest turn) is lower case. */
export const alluppercase: CheckDef<Params> = {
  id: 'alluppercase',
  params: Params,
  supportsNot: true,
  run(input) {
    const n = countCased(phaseText(input, 'text')).lower;
    return { verdict: n === 0, data: { lowercaseLetters: n } };
  },
};
