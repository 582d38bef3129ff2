/**
 * Arbitraries for what configs hand the regex engine (not a test file itself): patterns, JSON
 * Schemas that carry patterns, and texts that make a backtracking engine take exponential time. Any
 * pattern is fair: it compiles (RE2 syntax, within the size caps of src/util/bounded-regex.ts) or
 * is refused with a message naming it, and what compiles answers on any text without a stall.
 */
import fc from 'fast-check';
import type { z } from 'zod';
import { regexRule } from '../../src/checks/params.js';
import { CHECKS } from '../../src/checks/registry.js';
import { compileBoundedRegex } from '../../src/util/bounded-regex.js';

/** Pieces of regex syntax, RE2's and JavaScript's (which RE2 refuses), so that both classes are common. */
const PIECES = [
  '(', ')', '[', ']', '[^', '{', '}', '*', '+', '?', '*?', '|', '^', '$', '.', '\\', '-', ',', ' ',
  '\\1', '(?=', '(?!', '(?<=', '(?<!', '(?:', '(?i)', '(?s)', '(?m)', '(?P<n>', '(?<n>', '\\k<n>',
  '\\b', '\\B', '\\d', '\\w', '\\s', '\\S', '\\p{L}', '\\pL', '\\x{41}', '\\u0041', '\\Q', '\\E', '\\z', '\\A',
  '{2}', '{2,}', '{1,5}', '{1000}', '{1001}', '[[:alpha:]]', 'a', 'b', 'ab', 'secret',
];

/** Patterns that stall a backtracking engine, or sit at the edges of RE2's and this gateway's caps. */
export const EVIL_PATTERNS = [
  '^(a+)+$', '(a|aa)+$', '^(a|a?)+$', '^(\\w+\\s?)*$', '(x+x+)+y', '(.*a){20}', '(.*a){200}', '[ab]*a[ab]{20}c',
  '(?:[ab]*a[ab]{20}c|[ab]*b[ab]{19}d)', 'a{1000}', '(?:a{1000}){1000}', '(?:a{30}){30}', '(a)\\1', 'a(?=b)', '(?<!x)y',
  'x'.repeat(256), 'x'.repeat(257), '\\b\\w+\\b\\d', '(?s)secret.*', 'secret.*', '', '.*', 'a*',
];

/** Any pattern: built from regex syntax, any string at all (over the 256-character cap too), or a known-evil one. */
export const anyPattern: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 3 })), { maxLength: 24 }).map((p) => p.join('')) },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
  { weight: 2, arbitrary: fc.constantFrom(...EVIL_PATTERNS) },
);

/** Texts on which the evil patterns backtrack for hours, long ones past a 4 KB window, and plain ones. */
export const EVIL_TEXTS = [
  `${'a'.repeat(48)}!`,
  `${'ab'.repeat(3000)}${'b'.repeat(30)}c`,
  `${'x'.repeat(5000)}secret${'y'.repeat(100)}`,
  `${'word '.repeat(2000)}1`,
  'hello fuzz',
];
export const anyText: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...EVIL_TEXTS), fc.string({ maxLength: 40 }));

/** Whether `pattern` compiles as a config regex (what the gateway must then accept). */
export function compiles(pattern: string, flags = ''): boolean {
  try {
    compileBoundedRegex(pattern, 'rule', flags);
    return true;
  } catch {
    return false;
  }
}

/** JSON Schemas whose `pattern` / `patternProperties` carry any pattern (Ajv compiles them with the bounded engine). */
export const schemaWithPatterns: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  anyPattern.map((pattern) => ({ type: 'object', properties: { a: { type: 'string', pattern } } })),
  anyPattern.map((p) => ({ type: 'object', patternProperties: { [p]: { type: 'string' } } })),
  anyPattern.map((pattern) => ({ type: 'string', pattern })),
);

/** Overrides for `valuesOf` on check parameters: the pattern checks' rule and schema drawn as above. */
export const PATTERN_PARAM_OVERRIDES: ReadonlyMap<z.ZodType, fc.Arbitrary<unknown>> = new Map<z.ZodType, fc.Arbitrary<unknown>>([
  [regexRule, anyPattern],
  [(CHECKS.get('default.jsonSchema')!.params as unknown as z.ZodObject).shape.schema as z.ZodType, schemaWithPatterns],
]);
