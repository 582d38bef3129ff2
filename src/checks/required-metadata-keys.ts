import { z } from 'zod';
import { byOperator, operator } from './params.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({ metadataKeys: z.array(z.string().min(1)).min(1), operator: operator.default('all') });
type Params = z.infer<typeof Params>;

/** Whether the request's metadata has `all` (default), `any` or `none` of `metadataKeys`. */
export const requiredMetadataKeys: CheckDef<Params> = {
  id: 'requiredMetadataKeys',
  params: Params,
  run(input, p) {
    const found = p.metadataKeys.filter((k) => Object.hasOwn(input.metadata, k));
    const missing = p.metadataKeys.filter((k) => !Object.hasOwn(input.metadata, k));
    return {
      verdict: byOperator(p.operator, found.length, p.metadataKeys.length),
      data: { operator: p.operator, found_metadata_keys: found, missing_metadata_keys: missing },
    };
  },
};
