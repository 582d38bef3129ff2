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
 * Every match of `re` over the whole of `s`, each test bounded: `s` is read in windows of
 * MAX_REGEX_INPUT characters that overlap by half, so a match of up to MAX_REGEX_INPUT / 2
 * characters is found wherever it sits, and no test sees more than MAX_REGEX_INPUT characters.
 * (Guardrails must not be bypassed by padding, so unlike routing they read all the text.)
 * Returns [start, end) ranges in `s`, sorted, overlapping ranges merged. `re` needs no flags; a
 * copy with `g` is used. Empty matches are ignored.
 */
export function findBounded(re: RegExp, s: string, limit = Infinity): Array<[number, number]> {
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g');
  const out: Array<[number, number]> = [];
  const step = MAX_REGEX_INPUT / 2;
  for (let start = 0; ; start += step) {
    const window = start === 0 && s.length <= MAX_REGEX_INPUT ? s : s.slice(start, start + MAX_REGEX_INPUT);
    g.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = g.exec(window)) !== null) {
      if (m[0].length === 0) {
        g.lastIndex++;
        continue;
      }
      const a = start + m.index;
      const b = a + m[0].length;
      const last = out[out.length - 1];
      if (last && a <= last[1]) last[1] = Math.max(last[1], b);
      else if (!last || a >= last[0]) out.push([a, b]);
      if (out.length >= limit) return out;
    }
    if (start + MAX_REGEX_INPUT >= s.length) break;
  }
  return out;
}
