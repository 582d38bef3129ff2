import { z } from 'zod';
import { compileBoundedRegex, findBounded, searchBudget } from '../util/bounded-regex.js';
import { memoByObject } from '../util/memo.js';
import { regexRule } from './params.js';
import { rewritePhaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({ rule: regexRule, redactText: z.string().default('[REDACTED]') });
type Params = z.infer<typeof Params>;

const compiled = memoByObject((p: Params) => compileBoundedRegex(p.rule, 'rule'));

/**
 * Mutator: replaces every match of `rule` in every text of the request (all messages, prompts,
 * inputs) or of the answer with `redactText`, inserted as it is (`$1` and friends are not expanded).
 * Each text is searched whole (a match of any length, anywhere); a text too long to search, or a run
 * past the search time budget (one for all the texts), throws: the hook fails closed rather than
 * pass text it did not redact. Always passes otherwise; `data.replacements` counts the matches.
 */
export const regexReplace: CheckDef<Params> = {
  id: 'regexReplace',
  params: Params,
  mutator: true,
  run(input, p) {
    const re = compiled(p);
    const budget = searchBudget();
    let replacements = 0;
    const transformed = rewritePhaseText(input, (text) => {
      const ranges = findBounded(re, text, Infinity, budget);
      if (ranges.length === 0) return text;
      replacements += ranges.length;
      let out = '';
      let at = 0;
      for (const [a, b] of ranges) {
        out += text.slice(at, a) + p.redactText;
        at = b;
      }
      return out + text.slice(at);
    });
    return { verdict: true, data: { replacements }, transformed };
  },
};
