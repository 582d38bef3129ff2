import { z } from 'zod';
import { countWords } from './counting.js';
import { maxAtLeastMin, nonNegInt } from './params.js';
import { phaseText } from './text.js';
import { DATA_JSON, type CheckDef } from './types.js';
import { memoByObject } from '../util/memo.js';

const Params = z
  .strictObject({ minWords: nonNegInt.default(0), maxWords: nonNegInt.default(99999) })
  .refine(...maxAtLeastMin<{ minWords: number; maxWords: number }>('minWords', 'maxWords'));
type Params = z.infer<typeof Params>;

/** The parameters' part of `data`'s JSON text, made once per config. */
const bounds = memoByObject((p: Params) => `,"minWords":${p.minWords},"maxWords":${p.maxWords}}`);

/**
 * Passes when the number of words is within [minWords, maxWords] (both included), counted in the
 * latest turn of the request (the last user message, prompt or input) or in the answer.
 */
export const wordCount: CheckDef<Params> = {
  id: 'wordCount',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const count = countWords(phaseText(input, 'text'));
    return { verdict: count >= p.minWords && count <= p.maxWords, data: { count, minWords: p.minWords, maxWords: p.maxWords }, [DATA_JSON]: `{"count":${count}${bounds(p)}` };
  },
};
