import type { z } from 'zod';
import { GatewayError, type Issue } from '../errors/gateway-error.js';
import type { ErrorCode } from '../errors/codes.js';

/** zod's issues with their paths intact, prefixed (e.g. ['config']) so the client sees where. */
export function toIssues(error: z.ZodError, prefix: (string | number)[] = []): Issue[] {
  return error.issues.map((i) => ({
    path: [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    message: i.message,
    code: i.code,
  }));
}

/** Dotted path for `param` and messages: ['messages', 0, 'role'] -> "messages[0].role". */
export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? p : `.${p}`;
  }
  return out;
}

/**
 * Where an issue points, for `param`: its path, and for an unknown key the key itself (zod puts an
 * unrecognized_keys issue on the object that holds the keys, so a strict query's `?nope=1` would
 * otherwise name nothing).
 */
function paramPath(issue: z.core.$ZodIssue, prefix: (string | number)[]): (string | number)[] {
  const path = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  return issue.code === 'unrecognized_keys' && issue.keys.length > 0 ? [...path, issue.keys[0]!] : path;
}

/** Parse with a schema or throw the gateway error for `code`, naming the first bad path (an unknown key by its name). */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  code: ErrorCode,
  what: string,
  prefix: (string | number)[] = [],
): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issues = toIssues(r.error, prefix);
  const first = issues[0];
  const where = first ? formatPath(paramPath(r.error.issues[0]!, prefix)) : '';
  const message = first
    ? `Invalid ${what}: ${where ? `${where}: ` : ''}${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`
    : `Invalid ${what}.`;
  throw new GatewayError(code, message, { param: where || null, issues });
}
