/**
 * Regular expressions that come from configs (conditional `$regex`, the `regexMatch` and
 * `regexReplace` checks) are bounded the same way: the pattern has at most MAX_REGEX_PATTERN
 * characters and each test sees at most MAX_REGEX_INPUT characters, so a config cannot make one
 * test run over a whole 16 MiB body.
 */
export const MAX_REGEX_PATTERN = 256;
export const MAX_REGEX_INPUT = 4096;

/**
 * Compiles a pattern from a config.
 * @throws Error whose message names `name` and says what is wrong (not a string, too long, invalid);
 * callers wrap it in their own error naming the config path.
 */
export function compileBoundedRegex(pattern: unknown, name = 'regex', flags?: string): RegExp {
  if (typeof pattern !== 'string' || pattern.length > MAX_REGEX_PATTERN) {
    throw new Error(`${name} takes a pattern of at most ${MAX_REGEX_PATTERN} characters`);
  }
  try {
    return new RegExp(pattern, flags);
  } catch (e) {
    throw new Error(`invalid ${name}: ${(e as Error).message}`);
  }
}

/** Tests `re` on the first MAX_REGEX_INPUT characters of `s` (routing: a prefix decides). */
export function testBoundedPrefix(re: RegExp, s: string): boolean {
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
 * Returns [start, end) ranges in `s`, sorted, overlapping ranges merged; at most `limit` of them
 * (then in the order found). `re` must have the `g` flag (compile it with `compileBoundedRegex(p, name, 'g')`, once per config):
 * its `lastIndex` is reset before each window, so sharing it between requests is safe, as a search
 * runs to its end without yielding. Empty matches are ignored.
 */
export function findBounded(g: RegExp, s: string, limit = Infinity): Array<[number, number]> {
  if (!g.global) throw new Error('findBounded needs a regex with the g flag');
  const found: Array<[number, number]> = [];
  const step = MAX_REGEX_INPUT / 2;
  for (let k = 0; ; k++) {
    const from = k === 0 ? 0 : k * step - 1;
    const to = Math.min(s.length, from + MAX_REGEX_INPUT);
    const window = from === 0 && to === s.length ? s : s.slice(from, to);
    g.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = g.exec(window)) !== null) {
      if (m[0].length === 0) {
        g.lastIndex++;
        continue;
      }
      const a = from + m.index;
      const b = a + m[0].length;
      if ((from > 0 && m.index === 0) || (to < s.length && b === to)) continue;
      found.push([a, b]);
      if (found.length >= limit) return found;
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
