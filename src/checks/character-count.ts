import { z } from 'zod';
import { countCharacters } from './counting.js';
import { maxAtLeastMin, nonNegInt } from './params.js';
import { phaseText } from './text.js';
import { DATA_JSON, type CheckDef } from './types.js';
import { memoByObject } from '../util/memo.js';

const Params = z
  .strictObject({ minCharacters: nonNegInt.default(0), maxCharacters: nonNegInt.default(9999999) })
  .refine(...maxAtLeastMin<{ minCharacters: number; maxCharacters: number }>('minCharacters', 'maxCharacters'));
type Params = z.infer<typeof Params>;

/** The parameters' part of `data`'s JSON text, made once per config. */
const bounds = memoByObject((p: Params) => `,"minCharacters":${p.minCharacters},"maxCharacters":${p.maxCharacters}}`);

/**
 * Passes when the number of characters is within [minCharacters, maxCharacters] (both included), counted in the
 * latest turn of the request (the last user message, prompt or input) or in the answer.
 */
export const characterCount: CheckDef<Params> = {
  id: 'characterCount',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const count = countCharacters(phaseText(input, 'text'));
    return { verdict: count >= p.minCharacters && count <= p.maxCharacters, data: { count, minCharacters: p.minCharacters, maxCharacters: p.maxCharacters }, [DATA_JSON]: `{"count":${count}${bounds(p)}` };
  },
};
