import { z } from 'zod';
import { detectPii, PII_CATEGORIES, type PiiCategory } from './pii-detect.js';
import { phaseText, rewritePhaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({
  /** The categories to look for (pii-detect.ts); all when absent. */
  categories: z.array(z.enum(PII_CATEGORIES)).min(1).optional(),
  /** Replace each match with [REDACTED_<CATEGORY>] instead of failing. */
  redact: z.boolean().default(false),
});
type Params = z.infer<typeof Params>;

const ALL: ReadonlySet<PiiCategory> = new Set(PII_CATEGORIES);
const wantedOf = (p: Params): ReadonlySet<PiiCategory> => (p.categories ? new Set(p.categories) : ALL);

function countBy(matches: { category: PiiCategory }[], into: Record<string, number>): void {
  for (const m of matches) into[m.category] = (into[m.category] ?? 0) + 1;
}

/**
 * Fails when the text (every text sent, or the answer) contains personal data of `categories`
 * (every category when absent). With `redact: true` it is a mutator: each match in every message,
 * prompt, input or answer choice becomes `[REDACTED_<CATEGORY>]` and the check passes (the data is
 * gone). `data.detected` counts matches per category; the matches themselves are never in `data`.
 */
export const pii: CheckDef<Params> = {
  id: 'pii',
  params: Params,
  mutator: true,
  run(input, p) {
    const wanted = wantedOf(p);
    const detected: Record<string, number> = {};
    if (!p.redact) {
      countBy(detectPii(phaseText(input, 'allText'), wanted), detected);
      return { verdict: Object.keys(detected).length === 0, data: { detected } };
    }
    const transformed = rewritePhaseText(input, (text) => {
      const matches = detectPii(text, wanted);
      if (matches.length === 0) return text;
      countBy(matches, detected);
      let out = '';
      let at = 0;
      for (const m of matches) {
        out += `${text.slice(at, m.start)}[REDACTED_${m.category}]`;
        at = m.end;
      }
      return out + text.slice(at);
    });
    return { verdict: true, data: { detected, redacted: transformed !== undefined }, transformed };
  },
};
