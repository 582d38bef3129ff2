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

