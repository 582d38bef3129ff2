import { z } from 'zod';
import { compileBoundedRegex, findBounded } from '../util/bounded-regex.js';
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
 * Always passes; `data.replacements` counts the matches.
 */
export const regexReplace: CheckDef<Params> = {
  id: 'regexReplace',
  params: Params,
  mutator: true,
  run(input, p) {
    const re = compiled(p);
    let replacements = 0;
    const transformed = rewritePhaseText(input, (text) => {
      const ranges = findBounded(re, text);
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
