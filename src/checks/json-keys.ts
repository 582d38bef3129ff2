import { z } from 'zod';
import { extractJson } from './json-text.js';
import { byOperator, operator } from './params.js';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({ keys: z.array(z.string().min(1)).min(1), operator: operator.default('any') });
type Params = z.infer<typeof Params>;

/**
 * Whether the JSON object in the text (as jsonSchema finds it) has `any`, `all` or `none` of `keys`
 * at its top level. Fails when the text holds no JSON object.
 */
export const jsonKeys: CheckDef<Params> = {
  id: 'jsonKeys',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const json = extractJson(phaseText(input, 'text'));
    const obj = json?.value;
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      return { verdict: false, data: { explanation: 'no JSON object found in the text' } };
    }
    const found = p.keys.filter((k) => Object.hasOwn(obj, k));
    const missing = p.keys.filter((k) => !Object.hasOwn(obj, k));
    return { verdict: byOperator(p.operator, found.length, p.keys.length), data: { operator: p.operator, found, missing } };
  },
};
