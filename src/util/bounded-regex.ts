import { RE2JS } from 're2js';

/**
 * Regular expressions that come from configs and stored guardrails (conditional `$regex`, the
 * `regexMatch` and `regexReplace` checks, jsonSchema `pattern`) run on RE2 (the `re2js` port): matching
 * takes time linear in the text, whatever the pattern, so no pattern can stall the event loop the way
 * `^(a+)+$` does on a backtracking engine. RE2 has no backreferences and no lookaround; a pattern that
 * uses them is refused when its config is validated. Linear is not free: finding where a match sits
 * costs about (characters read) x (size of the compiled program). So the pattern has at most
 * MAX_REGEX_PATTERN characters and compiles to at most MAX_REGEX_PROGRAM instructions, each test sees
 * at most MAX_REGEX_INPUT characters, and a search over a whole text (findBounded) that has run for
 * MAX_REGEX_SEARCH_MS gives up by throwing, which fails the check (closed unless the hook says
 * `fail_on_error: false`).
 */
export const MAX_REGEX_PATTERN = 256;
export const MAX_REGEX_INPUT = 4096;
export const MAX_REGEX_PROGRAM = 1000;
export const MAX_REGEX_SEARCH_MS = 500;

/** A compiled config pattern (stateless: one object serves every request). */
export type BoundedRegex = RE2JS;

/** JavaScript flags a caller may ask for, as RE2 flags (`u` is RE2's only mode; `g` is how findBounded reads anyway). */
const FLAGS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0, g: 0 };

/**
 * Compiles a pattern from a config.
 * @throws Error whose message names `name` and says what is wrong (not a string, too long, not RE2
 * syntax, too large); callers wrap it in their own error naming the config path.
 */
export function compileBoundedRegex(pattern: unknown, name = 'regex', flags = ''): BoundedRegex {
  if (typeof pattern !== 'string' || pattern.length > MAX_REGEX_PATTERN) {
    throw new Error(`${name} takes a pattern of at most ${MAX_REGEX_PATTERN} characters`);
  }
  let bits = 0;
  for (const f of flags) {
    const bit = FLAGS[f];
    if (bit === undefined) throw new Error(`${name}: flag "${f}" is not supported`);
    bits |= bit;
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, bits);
  } catch (e) {
    throw new Error(`invalid ${name} (RE2 syntax: no backreferences or lookaround): ${(e as Error).message}`);
  }
  if (re.programSize() > MAX_REGEX_PROGRAM) {
    throw new Error(`${name} is too large once compiled (${re.programSize()} > ${MAX_REGEX_PROGRAM} instructions; lower its repeat counts)`);
  }
  return re;
}

/** Tests `re` on the first MAX_REGEX_INPUT characters of `s` (routing: a prefix decides). */
export function testBoundedPrefix(re: BoundedRegex, s: string): boolean {
  return re.test(s.length > MAX_REGEX_INPUT ? s.slice(0, MAX_REGEX_INPUT) : s);
}

/**
 * Every match of `re` over the whole of `s`, each test bounded: `s` is read in windows of at most
 * MAX_REGEX_INPUT characters whose starts are MAX_REGEX_INPUT / 2 apart, so a match of up to
 * MAX_REGEX_INPUT / 2 - 2 characters is found wherever it sits, and no test sees more than
 * MAX_REGEX_INPUT characters. (Guardrails must not be bypassed by padding, so unlike routing they
 * read all the text.) A window after the first starts one character early and one that ends before
 * the text ends one character late; matches touching those extra characters are dropped, so `^`,
 * `$` and `\b` do not match at a window's cut (the neighbouring window sees that spot inside).
 * Returns [start, end) ranges in `s` (UTF-16 offsets), sorted, overlapping ranges merged; at most
 * `limit` of them (then in the order found). Empty matches are ignored.
 * @throws Error when the search has run `budgetMs` (checked between windows and between matches; one
 * step is bounded by MAX_REGEX_INPUT x MAX_REGEX_PROGRAM).
 */
export function findBounded(re: BoundedRegex, s: string, limit = Infinity, budgetMs = MAX_REGEX_SEARCH_MS): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  const step = MAX_REGEX_INPUT / 2;
  const deadline = performance.now() + budgetMs;
  const overBudget = (): never => {
    throw new Error(`the regex search gave up after ${budgetMs} ms at character ${found.length > 0 ? found[found.length - 1]![1] : 0} of ${s.length}`);
  };
  for (let k = 0; ; k++) {
    if (k > 0 && performance.now() > deadline) overBudget();
    const from = k === 0 ? 0 : k * step - 1;
    const to = Math.min(s.length, from + MAX_REGEX_INPUT);
    const window = from === 0 && to === s.length ? s : s.slice(from, to);
    // Most windows hold no match: the test runs on RE2's DFA, far cheaper than finding positions.
    if (re.test(window)) {
      const m = re.matcher(window);
      while (m.find()) {
        if (performance.now() > deadline) overBudget();
        const start = m.start();
        const end = m.end();
        if (end === start) continue;
        const a = from + start;
        const b = from + end;
        if ((from > 0 && start === 0) || (to < s.length && b === to)) continue;
        found.push([a, b]);
        if (found.length >= limit) return found;
      }
    }
    if (to >= s.length) break;
  }
  if (found.length < 2) return found;
  found.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const out: Array<[number, number]> = [found[0]!];
  for (let i = 1; i < found.length; i++) {
    const last = out[out.length - 1]!;
    const [a, b] = found[i]!;
    if (a < last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}
