import { RE2JS } from 're2js';

/**
 * Regular expressions that come from configs and stored guardrails (conditional `$regex`, the
 * `regexMatch` and `regexReplace` checks, jsonSchema `pattern`) run on RE2 (the `re2js` port): matching
 * takes time linear in the text, whatever the pattern, so no pattern can stall the event loop the way
 * `^(a+)+$` does on a backtracking engine. RE2 has no backreferences and no lookaround; a pattern that
 * uses them is refused when its config is validated. Linear is not free: a search that falls back
 * from RE2's DFA to its NFA costs about (characters read) x (size of the compiled program), and one
 * engine call cannot be interrupted. So the pattern has at most MAX_REGEX_PATTERN characters and
 * compiles to at most MAX_REGEX_PROGRAM instructions, and no engine call reads more than
 * MAX_REGEX_WORK / (program size) characters:
 *
 * - routing (`$regex`) and jsonSchema tests read at most MAX_REGEX_INPUT characters (a prefix decides);
 * - the guardrail checks search a text whole (findBounded), never in pieces: a match is a match
 *   wherever it sits and however long it is, so padding cannot push one out of sight. A text longer
 *   than the rule's bound is not searched: findBounded throws, which fails the check (closed unless
 *   the hook says `fail_on_error: false`), as does a search that has run for MAX_REGEX_SEARCH_MS
 *   (checked between engine calls).
 */
export const MAX_REGEX_PATTERN = 256;
export const MAX_REGEX_INPUT = 4096;
export const MAX_REGEX_PROGRAM = 1000;
export const MAX_REGEX_SEARCH_MS = 500;

/**
 * RE2's DFA builds its states as a search needs them and keeps them with the compiled pattern
 * (re2js allows 8 MiB a pattern; crafted patterns such as `a[ab]{20}c` fill several MiB), so many
 * stored guardrails could hold hundreds of MiB. Two bounds keep it flat: each pattern's DFA may hold
 * MAX_REGEX_DFA_BYTES (re2js's own accounting, which matches the heap it takes; past it the DFA
 * starts over, or hands the search to the NFA, still linear), and only the MAX_REGEX_WARM patterns
 * used last keep their states: using another drops the states of the one used longest ago (it
 * rebuilds them when next used). So the DFA states of every config pattern together stay under
 * MAX_REGEX_WARM x MAX_REGEX_DFA_BYTES = 16 MiB, however many guardrails are stored.
 */
export const MAX_REGEX_DFA_BYTES = 256 * 1024;
export const MAX_REGEX_WARM = 64;

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
  // The DFA is made now (empty: its states come with searches) so that its budget is set once; a
  // cleared cache keeps the budget.
  const dfa = re.re2().dfa;
  dfa.maxMem = dfa.stateBudget = dfa.memBudget = MAX_REGEX_DFA_BYTES;
  return re;
}

/** Patterns whose DFA may hold states, the one used longest ago first (a Set keeps insertion order). */
const warm = new Set<BoundedRegex>();
let newest: BoundedRegex | undefined;

/** Marks `re` as used now; the pattern that falls out of the MAX_REGEX_WARM last used drops its DFA states. */
function touch(re: BoundedRegex): void {
  if (re === newest) return;
  newest = re;
  warm.delete(re);
  warm.add(re);
  if (warm.size > MAX_REGEX_WARM) {
    const oldest = warm.values().next().value!;
    warm.delete(oldest);
    oldest.re2().dfa.clearCache();
  }
}

/** Tests `re` on the whole of `s` (the caller bounds `s`: at most MAX_REGEX_INPUT characters). */
export function testBounded(re: BoundedRegex, s: string): boolean {
  touch(re);
  return re.test(s);
}

/** Tests `re` on the first MAX_REGEX_INPUT characters of `s` (routing: a prefix decides). */
export function testBoundedPrefix(re: BoundedRegex, s: string): boolean {
  touch(re);
  return re.test(s.length > MAX_REGEX_INPUT ? s.slice(0, MAX_REGEX_INPUT) : s);
}

/**
 * Most characters x program instructions one engine call may cost: the longest text a rule searches
 * is MAX_REGEX_WORK / its program size (4,096 characters for a rule of the largest size, 1,000
 * instructions; 315,076 for `\d{3}-\d{2}-\d{4}`, 13 instructions).
 */
export const MAX_REGEX_WORK = MAX_REGEX_INPUT * MAX_REGEX_PROGRAM;

/** The longest text `re` searches whole (findBounded). */
export function maxSearchLength(re: BoundedRegex): number {
  return Math.floor(MAX_REGEX_WORK / Math.max(1, re.programSize()));
}

/** When a check's searches must stop: one budget serves every text a check run searches. */
export interface SearchBudget {
  readonly deadline: number;
  readonly ms: number;
}

export function searchBudget(ms = MAX_REGEX_SEARCH_MS): SearchBudget {
  return { deadline: performance.now() + ms, ms };
}

/**
 * Every match of `re` in `s`, searched whole: leftmost-first and non-overlapping, as RE2 finds them
 * in the whole text (`^`, `$` and `\b` mean the text's own ends and word edges). Returns [start, end)
 * ranges (UTF-16 offsets), in order, at most `limit` of them. Empty matches are skipped.
 * Most texts hold no match: one test on RE2's DFA says so without locating anything; only a text
 * that matches is read again to find where.
 * @throws Error when `s` is longer than maxSearchLength(re) (it is not searched: a check fails closed
 * rather than pass a text it did not read), or when `budget` has run out (checked before the search
 * and between matches). The message quotes no text.
 */
export function findBounded(re: BoundedRegex, s: string, limit = Infinity, budget: SearchBudget = searchBudget()): Array<[number, number]> {
  const max = maxSearchLength(re);
  if (s.length > max) {
    throw new Error(`the text has ${s.length} characters; this rule searches at most ${max} (${MAX_REGEX_WORK} / its ${re.programSize()} instructions)`);
  }
  const found: Array<[number, number]> = [];
  const overBudget = (): never => {
    throw new Error(`the regex search gave up after ${budget.ms} ms at character ${found.length > 0 ? found[found.length - 1]![1] : 0} of ${s.length}`);
  };
  if (performance.now() > budget.deadline) overBudget();
  touch(re);
  if (!re.test(s)) return found;
  const m = re.matcher(s);
  while (m.find()) {
    const start = m.start();
    const end = m.end();
    if (end > start) {
      found.push([start, end]);
      if (found.length >= limit) break;
    }
    if (performance.now() > budget.deadline) overBudget();
  }
  return found;
}
