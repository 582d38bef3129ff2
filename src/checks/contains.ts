import { z } from 'zod';
import { byOperator, operator } from './params.js';
import { phaseText } from './text.js';
import { DATA_JSON, type CheckDef } from './types.js';
import { memoByObject } from '../util/memo.js';

const Params = z.strictObject({
  words: z.array(z.string().min(1)).min(1),
  operator: operator.default('any'),
});
type Params = z.infer<typeof Params>;

const noneFound = memoByObject((p: Params) => JSON.stringify({ operator: p.operator, found: [], missing: p.words }));
const allFound = memoByObject((p: Params) => JSON.stringify({ operator: p.operator, found: p.words, missing: [] }));

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
    // Nothing found, or everything: the JSON text of `data` is fixed per config.
    const fixed = found.length === 0 ? noneFound(p) : missing.length === 0 ? allFound(p) : undefined;
    return fixed === undefined ? { verdict, data: { operator: p.operator, found, missing } } : { verdict, data: { operator: p.operator, found, missing }, [DATA_JSON]: fixed };
  },
};
