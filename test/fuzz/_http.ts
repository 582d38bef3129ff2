/**
 * What every HTTP property asserts of an answer (not a test file itself), and arbitraries for what
 * a client may put on the wire: header-safe text and issue paths.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Answer, Reply } from '../helpers/http.js';

type Path = (string | number)[];

/** Header values a client can send (visible ASCII, spaces and tabs: what undici lets through). */
export const headerText = (maxLength = 24): fc.Arbitrary<string> =>
  fc.string({ maxLength, unit: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...'abcxyz0129-_.,:;/[]{}"= ') }, { weight: 1, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }) });

/**
 * The answer came (the exchange's timeout bounds it) and is not the gateway's own failure: no 500,
 * no `internal_error`, and every error is the JSON envelope with a code.
 */
export function answered(r: Answer | Reply, what: unknown): void {
  const ctx = `${JSON.stringify(what)?.slice(0, 2000)} → ${r.status} ${r.text.slice(0, 500)}`;
  expect(r.status, ctx).not.toBe(500);
  if (r.status >= 400 && !String(r.headers['content-type'] ?? '').includes('text/event-stream')) {
    expect(r.json?.error?.code, ctx).toEqual(expect.any(String));
    expect(r.json.error.code, ctx).not.toBe('internal_error');
  }
}

/** The answer refuses the input as a client error naming `param` (a field, a header, a query parameter). */
export function refused(r: Answer | Reply, what: unknown, code: string, path?: Path): void {
  const ctx = `${JSON.stringify(what)?.slice(0, 2000)} → ${r.status} ${r.text.slice(0, 800)}`;
  expect(r.status, ctx).toBe(400);
  expect(r.json?.error?.code, ctx).toBe(code);
  if (path === undefined) return;
  // Some issue names the broken place, or a place that holds it (a union refuses the whole field).
  const paths: Path[] = (r.json.issues ?? []).map((i: { path: Path }) => i.path);
  const related = (p: Path) => p.every((s, i) => i >= path.length || String(path[i]) === String(s)) || path.every((s, i) => String(p[i]) === String(s));
  expect(paths.some(related), `${ctx}\nexpected an issue at or around ${JSON.stringify(path)}`).toBe(true);
}

/** JSON for a header value: every character outside printable ASCII escaped (a header is bytes, not UTF-8). */
export const asciiJson = (v: unknown): string =>
  JSON.stringify(v).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Only what a client can put in a header value. */
export const headerSafe = (s: string): boolean => /^[\t\x20-\x7e]*$/.test(s);
