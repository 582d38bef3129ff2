import { z } from 'zod';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({});
type Params = z.infer<typeof Params>;

/**
 * Passes when the text (the answer's content, or the latest turn) is not empty or only whitespace.
 * An answer with only tool calls has no text, so it fails.
 */
export const notNull: CheckDef<Params> = {
  id: 'notNull',
  params: Params,
  supportsNot: true,
  run(input) {
    return { verdict: phaseText(input, 'text').trim() !== '' };
  },
};
