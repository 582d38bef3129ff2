import { z } from 'zod';
import { countSentences } from './counting.js';
import { maxAtLeastMin, nonNegInt } from './params.js';
import { phaseText } from './text.js';
import { DATA_JSON, type CheckDef } from './types.js';
import { memoByObject } from '../util/memo.js';

const Params = z
  .strictObject({ minSentences: nonNegInt.default(0), maxSentences: nonNegInt.default(99999) })
  .refine(...maxAtLeastMin<{ minSentences: number; maxSentences: number }>('minSentences', 'maxSentences'));
type Params = z.infer<typeof Params>;

/** The parameters' part of `data`'s JSON text, made once per config. */
const bounds = memoByObject((p: Params) => `,"minSentences":${p.minSentences},"maxSentences":${p.maxSentences}}`);

/**
 * Passes when the number of sentences is within [minSentences, maxSentences] (both included), counted in the
 * latest turn of the request (the last user message, prompt or input) or in the answer.
 */
export const sentenceCount: CheckDef<Params> = {
  id: 'sentenceCount',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const count = countSentences(phaseText(input, 'text'));
    return { verdict: count >= p.minSentences && count <= p.maxSentences, data: { count, minSentences: p.minSentences, maxSentences: p.maxSentences }, [DATA_JSON]: `{"count":${count}${bounds(p)}` };
  },
};
