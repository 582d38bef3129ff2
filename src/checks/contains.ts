import { z } from 'zod';
import { byOperator, operator } from './params.js';
import { phaseText } from './text.js';
import { DATA_JSON, type CheckDef, type CheckOutcome } from './types.js';
import { memoByObject } from '../util/memo.js';

const Params = z.strictObject({
  words: z.array(z.string().min(1)).min(1),
  operator: operator.default('any'),
});
type Params = z.infer<typeof Params>;

/** `data`'s JSON text when nothing was found and when everything was: fixed per config. */
const fixedData = memoByObject((p: Params) => ({
  none: JSON.stringify({ operator: p.operator, found: [], missing: p.words }),
  all: JSON.stringify({ operator: p.operator, found: p.words, missing: [] }),
}));

/**
 * Whether the text contains `any`, `all` or `none` of `words` (case-sensitive substrings) — every
 * text sent, or the answer. `data` lists which configured words were found and which were not.
 */
export const contains: CheckDef<Params> = {
  id: 'contains',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const text = phaseText(input, 'allText');
    const found: string[] = [];
    const missing: string[] = [];
    for (const w of p.words) (text.includes(w) ? found : missing).push(w);
    const verdict = byOperator(p.operator, found.length, p.words.length);
    const out: CheckOutcome = { verdict, data: { operator: p.operator, found, missing } };
    if (found.length === 0) out[DATA_JSON] = fixedData(p).none;
    else if (missing.length === 0) out[DATA_JSON] = fixedData(p).all;
    return out;
  },
};
