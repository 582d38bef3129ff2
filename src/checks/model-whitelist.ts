import { z } from 'zod';
import type { CheckDef } from './types.js';

const Params = z.strictObject({ models: z.array(z.string().min(1)).min(1) });
type Params = z.infer<typeof Params>;

/** Passes when the request's `model` is one of `models` (exact). `not: true` makes it a block list. */
export const modelWhitelist: CheckDef<Params> = {
  id: 'modelWhitelist',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const model = input.model;
    return { verdict: model !== undefined && p.models.includes(model), data: { model: model ?? null } };
  },
};
