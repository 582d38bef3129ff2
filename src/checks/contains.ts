import { z } from 'zod';
import { byOperator, operator } from './params.js';
import { phaseText } from './text.js';
import type { CheckDef, CheckOutcome } from './types.js';
import { memoByObject } from '../util/memo.js';

const Params = z.strictObject({
  words: z.array(z.string().min(1)).min(1),
  operator: operator.default('any'),
});
type Params = z.infer<typeof Params>;

/** The frozen outcome of a config when these words were found. */
function fixedOutcome(p: Params, found: readonly string[], missing: readonly string[]): CheckOutcome {
  const data = Object.freeze({ operator: p.operator, found: Object.freeze([...found]), missing: Object.freeze([...missing]) });
  return Object.freeze({ verdict: byOperator(p.operator, found.length, p.words.length), data });
}

/**
 * The outcomes when nothing was found and when everything was: fixed per config, made once (the
 * common answer to a deny list is "none found"; outcomes are read, never changed).
 */
const fixedOutcomes = memoByObject((p: Params) => ({
  none: fixedOutcome(p, [], p.words),
  all: fixedOutcome(p, p.words, []),
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
    const words = p.words;
    // One search per word; the lists are made only when the words split (the words before the
    // first split all went the same way as the first one).
    const first = text.includes(words[0]!);
    let found: string[] | undefined;
    let missing: string[] | undefined;
    for (let i = 1; i < words.length; i++) {
      const w = words[i]!;
      const hit = text.includes(w);
      if (found === undefined) {
        if (hit === first) continue;
        found = first ? words.slice(0, i) : [];
        missing = first ? [] : words.slice(0, i);
      }
      (hit ? found : missing!).push(w);
    }
    if (found === undefined) return first ? fixedOutcomes(p).all : fixedOutcomes(p).none;
    return { verdict: byOperator(p.operator, found.length, words.length), data: { operator: p.operator, found, missing: missing! } };
  },
};
