/**
 * Prompts and embedding inputs: string | string[] | number[] | number[][], checked in one pass. The
 * kind of array is taken from its first element and every element must then have that kind; the
 * loop stops at the first bad element (one issue, precise path), instead of a `z.union` of array
 * types that would walk the array once per branch and collect one issue per element.
 */
import { z } from 'zod';
import { kindOf, pushIssue } from './body-checks.js';

type TokenInput = string | string[] | number[] | number[][];

const EXPECTED = 'a string, an array of strings, an array of token ids or an array of token-id arrays';

const isTokenId = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;

function checkStrings(value: unknown[], ctx: z.core.ParsePayload, field: string, nonEmpty: boolean): void {
  for (let i = 0; i < value.length; i++) {
    const s: unknown = value[i];
    if (typeof s !== 'string') {
      pushIssue(ctx, [i], `${field} is an array of strings, so every item must be a string; got ${kindOf(s)}`, s);
      return;
    }
    if (nonEmpty && s.length === 0) {
      pushIssue(ctx, [i], `${field} must not contain empty strings`, s);
      return;
    }
  }
}

function checkTokenIds(value: unknown[], ctx: z.core.ParsePayload, field: string): void {
  for (let i = 0; i < value.length; i++) {
    if (!isTokenId(value[i])) {
      pushIssue(ctx, [i], `${field} is an array of token ids, so every item must be an integer >= 0`, value[i]);
      return;
    }
  }
}

function checkTokenRows(value: unknown[], ctx: z.core.ParsePayload, field: string, nonEmpty: boolean): void {
  for (let i = 0; i < value.length; i++) {
    const row: unknown = value[i];
    if (!Array.isArray(row)) {
      pushIssue(ctx, [i], `${field} is an array of token-id arrays, so every item must be an array; got ${kindOf(row)}`, row);
      return;
    }
    if (nonEmpty && row.length === 0) {
      pushIssue(ctx, [i], `${field} must not contain empty token arrays`, row);
      return;
    }
    for (let j = 0; j < row.length; j++) {
      if (!isTokenId(row[j])) {
        pushIssue(ctx, [i, j], 'token ids must be integers >= 0', row[j]);
        return;
      }
    }
  }
}

/** Validates a prompt-like field `value`, adding at most one issue to `ctx`. */
function checkTokenInput(value: unknown, ctx: z.core.ParsePayload, field: string, nonEmpty: boolean): void {
  if (typeof value === 'string') {
    if (nonEmpty && value.length === 0) pushIssue(ctx, [], `${field} must not be an empty string`, value);
    return;
  }
  if (!Array.isArray(value)) {
    if (value === undefined) {
      ctx.issues.push({ code: 'invalid_type', expected: 'string', path: [], input: value, message: `${field} is required` });
    } else {
      pushIssue(ctx, [], `${field} must be ${EXPECTED}, got ${kindOf(value)}`, value);
    }
    return;
  }
  if (value.length === 0) {
    if (nonEmpty) pushIssue(ctx, [], `${field} must not be an empty array`, value);
    return;
  }
  const first: unknown = value[0];
  if (typeof first === 'string') return checkStrings(value, ctx, field, nonEmpty);
  if (typeof first === 'number') return checkTokenIds(value, ctx, field);
  if (Array.isArray(first)) return checkTokenRows(value, ctx, field, nonEmpty);
  pushIssue(ctx, [0], `${field} must be ${EXPECTED}; got an array of ${kindOf(first).replace(/^an? /, '')}s`, first);
}

/** A schema for a prompt-like field; `nonEmpty`: no empty string, array, or item. */
export function tokenInput(field: string, nonEmpty: boolean) {
  return z.custom<TokenInput>().check((ctx) => checkTokenInput(ctx.value, ctx, field, nonEmpty));
}
