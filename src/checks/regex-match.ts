import { z } from 'zod';
import { compileBoundedRegex, findBounded } from '../util/bounded-regex.js';
import { memoByObject } from '../util/memo.js';
import { regexRule } from './params.js';
import { phaseText } from './text.js';
import type { CheckDef, CheckOutcome } from './types.js';

const Params = z.strictObject({ rule: regexRule });
type Params = z.infer<typeof Params>;

const compiled = memoByObject((p: Params) => compileBoundedRegex(p.rule, 'rule'));

/** The outcome when nothing matches: the same for every run (outcomes are read, never changed). */
const NO_MATCH: CheckOutcome = Object.freeze({ verdict: false, data: Object.freeze({ matched: false }) });

/**
 * Passes when the text matches `rule` (every text sent, or the answer). Use `not: true` to deny what
 * matches. The whole text is searched at once (a match of any length, anywhere); a text longer than
 * the rule's search bound throws, so the check fails closed either way. `data` gives the match's
 * offset, not the matched text.
 */
export const regexMatch: CheckDef<Params> = {
  id: 'regexMatch',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const hit = findBounded(compiled(p), phaseText(input, 'allText'), 1)[0];
    if (!hit) return NO_MATCH;
    return { verdict: true, data: { matched: true, offset: hit[0] } };
  },
};
