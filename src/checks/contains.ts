import { z } from 'zod';
import { byOperator, operator } from './params.js';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({
  words: z.array(z.string().min(1)).min(1),
  operator: operator.default('any'),
});
type Params = z.infer<typeof Params>;

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
    return { verdict: byOperator(p.operator, found.length, p.words.length), data: { operator: p.operator, found, missing } };
  },
};
