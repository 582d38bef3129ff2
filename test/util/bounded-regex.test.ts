/**
 * The memory bound of config patterns (src/util/bounded-regex.ts): each pattern's DFA holds at most
 * MAX_REGEX_DFA_BYTES of states, and only the MAX_REGEX_WARM patterns used last hold any. These read
 * re2js's own accounting of its DFA (`maxMem - memBudget`), the figure its budget is checked against:
 * should an upgrade of re2js rename those fields, the budget would no longer hold and these fail.
 */
import { describe, expect, it } from 'vitest';
import {
  compileBoundedRegex,
  findBounded,
  MAX_REGEX_DFA_BYTES,
  MAX_REGEX_WARM,
  testBounded,
  testBoundedPrefix,
  type BoundedRegex,
} from '../../src/util/bounded-regex.js';

/** Bytes of DFA states `re` holds now, as re2js counts them against its budget. */
const dfaBytes = (re: BoundedRegex): number => {
  const d = re.re2().dfa;
  return d.stateBudget - d.memBudget;
};

/** DFA states `re` holds now. */
const re2States = (re: BoundedRegex): number => re.re2().dfa.stateCount;

/** Text on which `a[ab]{20}c` makes a new DFA state at almost every character (2^20 of them exist). */
function abText(n: number): string {
  let x = 12345;
  let s = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    s += (x >> 8) & 1 ? 'a' : 'b';
  }
  return `${s}${'b'.repeat(25)}c`;
}

describe('DFA memory of config patterns', () => {
  it('a crafted pattern fills its DFA up to MAX_REGEX_DFA_BYTES and no further, and still answers right', () => {
    const re = compileBoundedRegex('a[ab]{20}c', 'rule');
    expect(re.re2().dfa.maxMem).toBe(MAX_REGEX_DFA_BYTES);
    const text = abText(100_000);
    expect(findBounded(re, text)).toEqual([]);
    const used = dfaBytes(re);
    expect(used).toBeGreaterThan(MAX_REGEX_DFA_BYTES / 2); // the budget was reached: the bound is what held it
    expect(used).toBeLessThanOrEqual(MAX_REGEX_DFA_BYTES);
    expect(findBounded(re, `${text.slice(0, -1)}a${'b'.repeat(20)}c`)).toEqual([[text.length - 1, text.length + 21]]);
    expect(dfaBytes(re)).toBeLessThanOrEqual(MAX_REGEX_DFA_BYTES);
  });

  it(`only the ${MAX_REGEX_WARM} patterns used last keep DFA states; one used again rebuilds them, with the same answers`, () => {
    const first = compileBoundedRegex('secret-[0-9]+', 'rule');
    const text = `${'x'.repeat(200)} secret-42 ${'y'.repeat(200)}`;
    expect(findBounded(first, text)).toEqual([[201, 210]]);
    expect(dfaBytes(first)).toBeGreaterThan(0);
    const others = Array.from({ length: MAX_REGEX_WARM }, (_, i) => compileBoundedRegex(`secret-[0-9]+|other${i}`, 'rule'));
    for (const [i, re] of others.entries()) {
      // every way a config pattern is used counts as a use
      if (i % 3 === 0) findBounded(re, text);
      else if (i % 3 === 1) testBoundedPrefix(re, text);
      else testBounded(re, text);
    }
    expect(dfaBytes(first)).toBe(0);
    expect(re2States(first)).toBe(0);
    expect(dfaBytes(others[others.length - 1]!)).toBeGreaterThan(0);
    expect(findBounded(first, text)).toEqual([[201, 210]]);
    expect(dfaBytes(first)).toBeGreaterThan(0);
    expect(first.re2().dfa.maxMem).toBe(MAX_REGEX_DFA_BYTES);
    // the pattern used longest ago among the others has now fallen out in turn
    expect(dfaBytes(others[0]!)).toBe(0);
  });
});
