/**
 * `hook_results` as JSON text, written by hand: the same text `JSON.stringify` makes of
 * `{before_request_hooks, after_request_hooks}` (same members, same order), at about two thirds of
 * its cost: a check's `data` goes through the generic serialiser only when the check did not write
 * it (DATA_JSON), a hook's `feedback` always, and ids of plain ASCII are quoted without it. It runs on every answer a hook ran on.
 */
import type { HookAccount, HookResult } from './hooks.js';
import type { CheckResult } from './settle.js';
import { DATA_JSON } from './types.js';

/** A number as JSON writes it (a non-finite one is null). */
const num = (n: number): string => (Number.isFinite(n) ? String(n) : 'null');

/** A string as JSON writes it; ids and short texts of plain ASCII skip the generic serialiser. */
function str(s: string): string {
  if (s.length > 64) return JSON.stringify(s);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(s);
  }
  return `"${s}"`;
}

function checkJson(c: CheckResult): string {
  // `data` is null when a check reports nothing (settle.ts); undefined is left out, as JSON.stringify does.
  const written = c[DATA_JSON];
  const data = written !== undefined ? `"data":${written},` : c.data === undefined ? '' : `"data":${JSON.stringify(c.data)},`;
  return `{"id":${str(c.id)},"verdict":${c.verdict},${data}"error":${c.error === null ? 'null' : str(c.error)},"execution_time":${num(c.execution_time)},"transformed":${c.transformed}}`;
}

function hookJson(h: HookResult): string {
  let s = `{"id":${str(h.id)},"verdict":${h.verdict},"deny":${h.deny},"async":${h.async},"checks":[`;
  for (let i = 0; i < h.checks.length; i++) s += i === 0 ? checkJson(h.checks[i]!) : `,${checkJson(h.checks[i]!)}`;
  s += `],"execution_time":${num(h.execution_time)},"transformed":${h.transformed}`;
  if (h.feedback !== undefined) s += `,"feedback":${JSON.stringify(h.feedback)}`;
  if (h.target !== undefined) s += `,"target":${str(h.target)}`;
  return `${s}}`;
}

function listJson(list: readonly HookResult[]): string {
  let s = '[';
  for (let i = 0; i < list.length; i++) s += i === 0 ? hookJson(list[i]!) : `,${hookJson(list[i]!)}`;
  return `${s}]`;
}

/** `JSON.stringify(hookResultsBody(account))`, faster. */
export function hookResultsJson(a: HookAccount): string {
  return `{"before_request_hooks":${listJson(a.before)},"after_request_hooks":${listJson(a.after)}}`;
}
