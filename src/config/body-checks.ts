/** Pieces the request-body schemas (bodies.ts) share: error wording and cross-field checks. */
import { z } from 'zod';

export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v === undefined) return 'nothing';
  return `a ${typeof v}`;
}

/** The top-level error for a body that is not a JSON object (array, string, number, null...). */
export const bodyObjectError = (iss: { code?: string; input?: unknown }): string | undefined =>
  iss.code === 'invalid_type' ? `expected a JSON object, got ${kindOf(iss.input)}` : undefined;

type Path = (string | number)[];

export function pushIssue(ctx: z.core.ParsePayload, path: Path, message: string, input: unknown): void {
  ctx.issues.push({ code: 'custom', message, path, input });
}

/**
 * Runs an object-level cross-field check only when the body is an object and none of `keys` (nor the
 * body itself) already failed, so cross-field errors are reported alongside unrelated field errors
 * but never on top of a bad value of the same fields.
 */
export function whenFieldsValid(...keys: string[]) {
  return (payload: z.core.ParsePayload): boolean => {
    const v = payload.value;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
    for (const iss of payload.issues) {
      const head = iss.path?.[0];
      if (head === undefined || keys.includes(head as string)) return false;
    }
    return true;
  };
}

/**
 * `stream_options` is only accepted together with `stream: true` (OpenAI answers 400 otherwise).
 * Cross-field checks are zod checks on the payload (`_check` with `when`), not superRefine, which
 * attaches and deletes a closure on every payload it runs on.
 */
export const streamOptionsCheck = () =>
  z.core._check<{ stream?: boolean | null; stream_options?: unknown }>(
    (ctx) => {
      const body = ctx.value;
      if (body.stream_options != null && body.stream !== true) {
        pushIssue(ctx, ['stream_options'], 'stream_options is only allowed when stream is true', body.stream_options);
      }
    },
    { when: whenFieldsValid('stream', 'stream_options') },
  );
