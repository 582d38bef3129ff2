import { z } from 'zod';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({ suffix: z.string().min(1) });
type Params = z.infer<typeof Params>;

/** Passes when the text (the answer, or the latest turn), trailing whitespace ignored, ends with `suffix`. */
export const endsWith: CheckDef<Params> = {
  id: 'endsWith',
  params: Params,
  supportsNot: true,
  run(input, p) {
    return { verdict: phaseText(input, 'text').trimEnd().endsWith(p.suffix) };
  },
};
