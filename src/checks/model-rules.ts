import { z } from 'zod';
import { normalModelId } from '../pricing/model-id.js';
import type { CheckDef } from './types.js';

const Models = z.array(z.string().min(1));

const Params = z.strictObject({
  rules: z
    .strictObject({
      /** Models allowed when no metadata rule matches. */
      defaults: Models.optional(),
      /** metadata key → metadata value → models allowed for requests carrying it. */
      metadata: z.record(z.string(), z.record(z.string(), Models)).optional(),
    })
    .refine((r) => (r.defaults?.length ?? 0) > 0 || Object.keys(r.metadata ?? {}).length > 0, {
      message: 'rules needs defaults or metadata',
    }),
});
type Params = z.infer<typeof Params>;

/**
 * Passes when the request's `model` is allowed by `rules`: the union of the models listed for each
 * metadata value the request carries (`rules.metadata[key][value]`; an array metadata value counts
 * each element), or `rules.defaults` when no metadata rule matches. Models are compared by their
 * normalised id (the price table's: without case or snapshot date). `not: true` inverts.
 */
export const modelRules: CheckDef<Params> = {
  id: 'modelRules',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const model = input.model;
    const allowed = new Set<string>();
    const matchedRules: string[] = [];
    for (const [key, byValue] of Object.entries(p.rules.metadata ?? {})) {
      const v = input.metadata[key];
      if (v === undefined || v === null) continue;
      for (const one of Array.isArray(v) ? v : [v]) {
        const models = Object.hasOwn(byValue, String(one)) ? byValue[String(one)] : undefined;
        if (!models) continue;
        matchedRules.push(`${key}:${String(one)}`);
        for (const m of models) allowed.add(m);
      }
    }
    const usingDefaults = matchedRules.length === 0;
    const list = usingDefaults ? (p.rules.defaults ?? []) : [...allowed];
    return {
      verdict: model !== undefined && list.some((m) => normalModelId(m) === normalModelId(model)),
      data: { model: model ?? null, matchedRules, usingDefaults },
    };
  },
};
