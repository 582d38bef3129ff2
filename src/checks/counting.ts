/** Counters for the count checks: one pass over the string, no arrays built; and their outcome. */
import type { CheckOutcome } from './types.js';

/**
 * The outcome of a count check whose parameters are `minKey` and `maxKey`: a pass when the count is
 * within them (both included). `data` is `{count, <minKey>, <maxKey>}`, made by the check's own
 * `data` (a literal with fixed keys: one with computed keys is built on V8's slow path on every run).
 */
export function countOutcome<K extends string, L extends string, P extends Record<K | L, number>>(
  minKey: K,
  maxKey: L,
  data: (count: number, p: P) => Record<string, number>,
): (count: number, p: P) => CheckOutcome {
  return (count, p) => ({ verdict: count >= p[minKey] && count <= p[maxKey], data: data(count, p) });
}

const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029;

/** Runs of non-whitespace. */
export function countWords(s: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const space = isSpace(s.charCodeAt(i));
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

const isEnd = (c: number): boolean => c === 46 || c === 33 || c === 63; // . ! ?

/**
 * Sentences: pieces of text that contain a non-space character and end at a run of `.`, `!` or `?`
 * or at the end of the text ("Hi. How are you?" is 2, "Hello world" is 1, "..." is 0).
 */
export function countSentences(s: string): number {
  let n = 0;
  let content = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isEnd(c)) {
      if (content) n++;
      content = false;
    } else if (!isSpace(c)) content = true;
  }
  return content ? n + 1 : n;
}

/** Unicode code points (an emoji is one character, not two UTF-16 units). */
export function countCharacters(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Cased letters of `s` by case (letters whose upper and lower forms are equal are not counted). */
export function countCased(s: string): { upper: number; lower: number } {
  let upper = 0;
  let lower = 0;
  for (const ch of s) {
    const u = ch.toUpperCase();
    if (u === ch.toLowerCase()) continue;
    if (ch === u) upper++;
    else lower++;
  }
  return { upper, lower };
}
