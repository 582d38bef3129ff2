import { Ajv, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import addFormatsModule from 'ajv-formats';
import { z } from 'zod';
import { compileBoundedRegex, MAX_REGEX_INPUT, testBounded } from '../util/bounded-regex.js';
import { memoByObject } from '../util/memo.js';
import { extractJson } from './json-text.js';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;

/**
 * `pattern` and `patternProperties` come from configs too: bounded as every config regex is (RE2,
 * linear time; a pattern of at most 256 characters in RE2 syntax, refused at config time otherwise);
 * a string longer than the regex input cap does not match (the check fails closed rather than run a
 * regex over it).
 */
const boundedRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    const re = compileBoundedRegex(pattern, 'pattern', flags);
    return { test: (s: string) => s.length <= MAX_REGEX_INPUT && testBounded(re, s) };
  },
  { code: 'boundedRegExp' },
);

/**
 * One Ajv for every schema: unknown keywords are an error (a schema that says more than it checks
 * is refused at config time), all errors are reported, formats (email, uri, date-time, ...) known.
 */
const ajv = addFormats(
  new Ajv({ allErrors: true, strictSchema: true, strictTypes: false, strictTuples: false, strictRequired: false, code: { regExp: boundedRegExp } }),
);

function compile(schema: Record<string, unknown>): ValidateFunction {
  return ajv.compile(schema);
}

const Params = z.strictObject({
  schema: z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
    try {
      compile(schema);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: `not a valid JSON Schema: ${(e as Error).message}` });
    }
  }),
});
type Params = z.infer<typeof Params>;

/** Compiled once per validated params object (plans keep theirs). */
const validator = memoByObject((p: Params) => compile(p.schema));

const MAX_ERRORS = 10;

/**
 * Passes when the JSON in the text (the whole text, a ```json block, or the outermost `{…}`) is valid
 * against `schema` (JSON Schema draft-07 / 2019 keywords, validated by Ajv). Reads the answer, or the
 * latest turn of the request. `data.errors` gives each failing path and rule, at most 10.
 */
export const jsonSchema: CheckDef<Params> = {
  id: 'jsonSchema',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const json = extractJson(phaseText(input, 'text'));
    if (!json) return { verdict: false, data: { valid: false, explanation: 'no JSON found in the text' } };
    const validate = validator(p);
    if (validate(json.value)) return { verdict: true, data: { valid: true } };
    const errors = (validate.errors ?? []).slice(0, MAX_ERRORS).map((e) => ({ path: e.instancePath, keyword: e.keyword, message: e.message }));
    return { verdict: false, data: { valid: false, errors } };
  },
};
