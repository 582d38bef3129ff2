/**
 * `hook_results` as JSON text, written by hand: the same text `JSON.stringify` makes of
 * `{before_request_hooks, after_request_hooks}` (same members, same order), for less. It runs on
 * every answer a hook ran on, so:
 * - the constant head of each check and hook (its id, verdict, deny, async) is made once per id and
 *   outcome (IdVariants), not per request;
 * - a check's `data` goes through the generic serialiser only when the check did not write it
 *   (DATA_JSON), a hook's `feedback` always;
 * - the text is concatenated, not collected in an array and joined: V8 keeps the concatenation as
 *   a rope that is flattened once, when the answer is written to the socket, and joining some sixty
 *   parts cost a little more than that (the hookResults stage's micro-benchmark, the answer's
 *   encoding included: 3.66 → 3.47 µs, 2026-11-25);
 * - `execution_time` is written from whole microseconds (`jsonMs3`).
 */
import type { HookAccount, HookResult } from './hooks.js';
import type { CheckResult } from './settle.js';
import { DATA_JSON } from './types.js';
import { IdVariants } from '../util/id-variants.js';
import { jsonMs3, jsonString as str } from '../util/json-write.js';

/** `{"id":…,"verdict":…,` of a check; variant 1 is a pass. */
const CHECK_HEADS = new IdVariants<string>((id, v) => `{"id":${str(id)},"verdict":${v === 1},`);
/** `{"id":…,"verdict":…,"deny":…,"async":…,"checks":[` of a hook; variant bits: 4 verdict, 2 deny, 1 async. */
const HOOK_HEADS = new IdVariants<string>((id, v) => `{"id":${str(id)},"verdict":${(v & 4) !== 0},"deny":${(v & 2) !== 0},"async":${(v & 1) !== 0},"checks":[`);

/** `,"target":…` of an output hook's result. */
const TARGETS = new IdVariants<string>((target) => `,"target":${str(target)}`);

function checkJson(c: CheckResult): string {
  // `data` is null when a check reports nothing (settle.ts); undefined is left out, as JSON.stringify does.
  const written = c[DATA_JSON];
  const data = written !== undefined ? `"data":${written},` : c.data !== undefined ? `"data":${JSON.stringify(c.data)},` : '';
  const error = c.error === null ? '"error":null' : `"error":${str(c.error)}`;
  return `${CHECK_HEADS.get(c.id, c.verdict ? 1 : 0)}${data}${error},"execution_time":${jsonMs3(c.execution_time)},"transformed":${c.transformed}}`;
}

/** One result's entry. */
function hookJson(h: HookResult): string {
  let s = HOOK_HEADS.get(h.id, (h.verdict ? 4 : 0) | (h.deny ? 2 : 0) | (h.async ? 1 : 0));
  const checks = h.checks;
  for (let i = 0; i < checks.length; i++) s += i > 0 ? `,${checkJson(checks[i]!)}` : checkJson(checks[i]!);
  s += `],"execution_time":${jsonMs3(h.execution_time)},"transformed":${h.transformed}`;
  if (h.feedback !== undefined) s += `,"feedback":${JSON.stringify(h.feedback)}`;
  if (h.target !== undefined) s += TARGETS.get(h.target, 0);
  return `${s}}`;
}

function listJson(list: readonly HookResult[]): string {
  let s = '';
  for (let i = 0; i < list.length; i++) s += i > 0 ? `,${hookJson(list[i]!)}` : hookJson(list[i]!);
  return s;
}

/** `JSON.stringify(hookResultsBody(account))`, faster. */
export function hookResultsJson(a: HookAccount): string {
  return `{"before_request_hooks":[${listJson(a.before)}],"after_request_hooks":[${listJson(a.after)}]}`;
}
