import { z } from 'zod';
import { normalModelId } from '../pricing/model-id.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({ models: z.array(z.string().min(1)).min(1) });
type Params = z.infer<typeof Params>;

/**
 * Passes when the request's `model` is one of `models`, both compared by their normalised id (the
 * price table's: `GPT-4o-mini-2024-07-18` is `gpt-4o-mini`), so a block list cannot be passed by
 * changing the case or naming a snapshot. `not: true` makes it a block list.
 */
export const modelWhitelist: CheckDef<Params> = {
  id: 'modelWhitelist',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const model = input.model;
    if (model === undefined) return { verdict: false, data: { model: null } };
    const id = normalModelId(model);
    return { verdict: p.models.some((m) => normalModelId(m) === id), data: { model } };
  },
};
