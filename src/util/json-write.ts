/**
 * Pieces of JSON text written by hand on hot paths (the request log line, `hook_results`): the same
 * text `JSON.stringify` makes, without its cost for the common value that needs no escaping.
 */

/** A character JSON.stringify escapes (any surrogate: it escapes the lone ones). */
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/;

/** A string as JSON.stringify writes it. */
export const jsonString = (v: string): string => (NEEDS_ESCAPE.test(v) ? JSON.stringify(v) : `"${v}"`);

/** A number as JSON.stringify (and pino) writes it: NaN and ±Infinity become null. */
export const jsonNumber = (v: number): string => (Number.isFinite(v) ? String(v) : 'null');

/**
 * A millisecond figure rounded to the microsecond (`ms3`: `Math.round(ms * 1000) / 1000`) as
 * JSON.stringify writes it, from its whole microseconds: integer formatting instead of the shortest
 * round-trip search a fractional double needs. Exact for such values below 10^12 ms (the decimal with
 * at most three fractional digits is then the shortest that reads back as the same double); any other
 * value is written by `jsonNumber`.
 */
export function jsonMs3(v: number): string {
  const us = Math.round(v * 1000);
  if (!(us >= 0 && us < 1e15) || us / 1000 !== v) return jsonNumber(v);
  const whole = Math.floor(us / 1000);
  let frac = us - whole * 1000;
  if (frac === 0) return `${whole}`;
  // Three digits, trailing zeros dropped: 0.5 → "5", 0.05 → "05", 0.005 → "005".
  let digits = 3;
  while (frac % 10 === 0) {
    frac /= 10;
    digits--;
  }
  const f = `${frac}`;
  return `${whole}.${f.length < digits ? (digits - f.length === 1 ? '0' : '00') + f : f}`;
}
