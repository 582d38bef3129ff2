/**
 * Personal data found in text, by category. Each category is a linear-time pattern plus, where a
 * number carries one, its checksum, so random digits are not reported:
 *
 * | category       | what                                                                  |
 * |----------------|-----------------------------------------------------------------------|
 * | EMAIL_ADDRESS  | local@domain.tld                                                      |
 * | PHONE_NUMBER   | international (+ and 8–15 digits) or North American (415) 555-2671, 415-555-2671 |
 * | CREDIT_CARD    | 13–19 digits, spaces or dashes between, passing the Luhn check        |
 * | IBAN           | country code, check digits, 11–30 characters, passing ISO 7064 mod-97 |
 * | IP_ADDRESS     | IPv4 dotted quads and IPv6 addresses                                  |
 * | SSN            | US Social Security number 123-45-6789 (dashed; 000, 666, 9xx areas excluded) |
 * | UK_NINO        | UK National Insurance number AB123456C (spaces allowed)               |
 * | AADHAAR        | Indian Aadhaar, 12 digits (groups of 4 allowed), Verhoeff check digit |
 * | PAN            | Indian Permanent Account Number ABCPE1234F                            |
 */
import net from 'node:net';

export const PII_CATEGORIES = [
  'EMAIL_ADDRESS',
  'PHONE_NUMBER',
  'CREDIT_CARD',
  'IBAN',
  'IP_ADDRESS',
  'SSN',
  'UK_NINO',
  'AADHAAR',
  'PAN',
] as const;
export type PiiCategory = (typeof PII_CATEGORIES)[number];

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 7064 mod 97-10 over the rearranged IBAN (letters as 10..35): valid when the rest is 1. */
export function ibanValid(iban: string): boolean {
  const s = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    const v = c >= 65 ? c - 55 : c - 48;
    rest = v >= 10 ? (rest * 100 + v) % 97 : (rest * 10 + v) % 97;
  }
  return rest === 1;
}

const VD = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
  [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
  [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
  [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
  [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
  [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
  [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
  [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
  [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];
const VP = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
  [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
  [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
  [9, 4, 5, 3, 1, 2, 7, 6, 8, 0],
  [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
  [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
  [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];

/** The Verhoeff check (Aadhaar's last digit). */
export function verhoeff(digits: string): boolean {
  let c = 0;
  for (let i = 0; i < digits.length; i++) c = VD[c]![VP[i % 8]![digits.charCodeAt(digits.length - 1 - i) - 48]!]!;
  return c === 0;
}

const onlyDigits = (s: string): string => s.replace(/\D/g, '');

interface Detector {
  category: PiiCategory;
  re: RegExp;
  valid?: (match: string) => boolean;
}

/** In priority order: where two matches overlap, the earlier detector's wins. */
const DETECTORS: Detector[] = [
  { category: 'EMAIL_ADDRESS', re: /[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/g },
  {
    category: 'IBAN',
    re: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])/g,
    valid: (m) => {
      const s = m.replace(/ /g, '');
      return s.length >= 15 && s.length <= 34 && ibanValid(s);
    },
  },
  {
    category: 'CREDIT_CARD',
    re: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g,
    valid: (m) => {
      const d = onlyDigits(m);
      return d.length >= 13 && d.length <= 19 && luhn(d);
    },
  },
  {
    category: 'AADHAAR',
    re: /(?<!\d)[2-9]\d{3} ?\d{4} ?\d{4}(?!\d)/g,
    valid: (m) => verhoeff(onlyDigits(m)),
  },
  { category: 'SSN', re: /(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])/g },
  {
    category: 'UK_NINO',
    re: /(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g,
  },
  { category: 'PAN', re: /(?<![A-Za-z0-9])[A-Z]{3}[ABCFGHJLPT][A-Z]\d{4}[A-Z](?![A-Za-z0-9])/g },
  {
    category: 'IP_ADDRESS',
    re: /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\.?\d)/g,
  },
  {
    category: 'IP_ADDRESS',
    re: /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{0,4}|(?:\d{1,3}\.){3}\d{1,3})(?![\w:])/g,
    valid: (m) => net.isIPv6(m),
  },
  {
    category: 'PHONE_NUMBER',
    re: /(?<![\w+])(?:\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}|(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4})(?!\w)/g,
    valid: (m) => {
      const n = onlyDigits(m).length;
      return m.startsWith('+') ? n >= 8 && n <= 15 : n === 10;
    },
  },
];

export interface PiiMatch {
  category: PiiCategory;
  start: number;
  end: number;
}

/**
 * Every match of the wanted categories, sorted by position, overlaps resolved by priority. Linear in
 * the text and the matches: each detector's matches arrive in order and are merged with the ones
 * already taken (sorted, disjoint) in one pass.
 */
export function detectPii(text: string, wanted: ReadonlySet<PiiCategory>): PiiMatch[] {
  let taken: PiiMatch[] = [];
  for (const d of DETECTORS) {
    if (!wanted.has(d.category)) continue;
    const merged: PiiMatch[] = [];
    let t = 0;
    for (const m of text.matchAll(d.re)) {
      const start = m.index;
      const end = start + m[0].length;
      while (t < taken.length && taken[t]!.end <= start) merged.push(taken[t++]!);
      if (t < taken.length && taken[t]!.start < end) continue; // overlaps a match of a higher priority
      if (d.valid && !d.valid(m[0])) continue;
      merged.push({ category: d.category, start, end });
    }
    while (t < taken.length) merged.push(taken[t++]!);
    taken = merged;
  }
  return taken;
}
