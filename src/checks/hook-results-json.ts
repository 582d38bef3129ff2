/**
 * `hook_results` as JSON text, written by hand: the same text `JSON.stringify` makes of
 * `{before_request_hooks, after_request_hooks}` (same members, same order), for less. It runs on
 * every answer a hook ran on, so:
 * - the text is made of as few pieces as it can be: each constant run between two values (a check's
 *   members up to its data; those after its time, with the close of its hook's list after the last
 *   check; a hook's members up to its checks and after its time) is one string, made once per id
 *   and outcome (IdVariants), not per request. V8 concatenates into a rope that is flattened when
 *   the answer is encoded for the socket, and both cost by the piece as well as by the byte
 *   (`npm run bench:micro -- --only hook`, whose hookResults case includes the answer's encoding,
 *   shows the fewer pieces; an array joined costs what the rope does, and writing the answer as
 *   bytes into a reused buffer allocated less but read no better in the `guardrails` scenario);
 * - a check's `data` goes through the generic serialiser only when the check did not write it
 *   (DATA_JSON), a hook's `feedback` always;
 * - `execution_time` is written from whole microseconds (`jsonMs3`).
 */
import type { HookAccount, HookResult } from './hooks.js';
import type { CheckResult } from './settle.js';
import { DATA_JSON } from './types.js';
import { IdVariants } from '../util/id-variants.js';
import { jsonMs3, jsonString as str } from '../util/json-write.js';

/**
 * A check's text up to its data: `{"id":…,"verdict":…,"data":` (without `,"data":` when it has none),
 * after a comma unless it is the hook's first. Variant bits: 1 pass, 2 has data, 4 not the first.
 */
const CHECK_HEADS = new IdVariants<string>((id, v) => `${v & 4 ? ',' : ''}{"id":${str(id)},"verdict":${(v & 1) !== 0}${v & 2 ? ',"data":' : ''}`);

/** `,"error":null,"execution_time":`: what follows a check's data when it has no error. */
const NO_ERROR = ',"error":null,"execution_time":';

/**
 * What follows a check's time: `,"transformed":…}`, and after the hook's last check the close of its
 * list up to the hook's own time. Index bits: 1 transformed, 2 last.
 */
const CHECK_TAILS = [0, 1, 2, 3].map((v) => `,"transformed":${(v & 1) !== 0}}${v & 2 ? '],"execution_time":' : ''}`);

/**
 * A hook's text up to its first check: `{"id":…,"verdict":…,"deny":…,"async":…,"checks":[`, after a
 * comma unless it is the list's first. Variant bits: 8 not the first, 4 verdict, 2 deny, 1 async.
 */
const HOOK_HEADS = new IdVariants<string>(
  (id, v) => `${v & 8 ? ',' : ''}{"id":${str(id)},"verdict":${(v & 4) !== 0},"deny":${(v & 2) !== 0},"async":${(v & 1) !== 0},"checks":[`,
);

/**
 * What follows a hook's time: `,"transformed":…,"target":…}` (keyed '' when it has no target), or after
 * its feedback only `,"target":…}`. Variant bits: 1 transformed, 2 has a target, 4 after the feedback.
 */
const HOOK_TAILS = new IdVariants<string>(
  (target, v) => `${v & 4 ? '' : `,"transformed":${(v & 1) !== 0}`}${v & 2 ? `,"target":${str(target)}` : ''}}`,
);

/** `s` and one check's entry. */
function appendCheck(s: string, c: CheckResult, notFirst: boolean, last: boolean): string {
  // `data` is null when a check reports nothing (settle.ts); undefined is left out, as JSON.stringify does.
  const written = c[DATA_JSON];
  const data = written !== undefined ? written : c.data !== undefined ? JSON.stringify(c.data) : undefined;
  s += CHECK_HEADS.get(c.id, (c.verdict ? 1 : 0) | (data !== undefined ? 2 : 0) | (notFirst ? 4 : 0));
  if (data !== undefined) s += data;
  s += c.error === null ? NO_ERROR : `,"error":${str(c.error)},"execution_time":`;
  s += jsonMs3(c.execution_time);
  return s + CHECK_TAILS[(c.transformed ? 1 : 0) | (last ? 2 : 0)]!;
}

/** `s` and one hook's entry. */
function appendHook(s: string, h: HookResult, notFirst: boolean): string {
  s += HOOK_HEADS.get(h.id, (notFirst ? 8 : 0) | (h.verdict ? 4 : 0) | (h.deny ? 2 : 0) | (h.async ? 1 : 0));
  const checks = h.checks;
  const n = checks.length;
  if (n === 0) s += '],"execution_time":';
  for (let i = 0; i < n; i++) s = appendCheck(s, checks[i]!, i > 0, i === n - 1);
  s += jsonMs3(h.execution_time);
  // `feedback` sits between `transformed` and `target`: written here, the tail without its `transformed`.
  if (h.feedback !== undefined) s += `,"transformed":${h.transformed},"feedback":${JSON.stringify(h.feedback)}`;
  return s + HOOK_TAILS.get(h.target ?? '', (h.transformed ? 1 : 0) | (h.target !== undefined ? 2 : 0) | (h.feedback !== undefined ? 4 : 0));
}

function appendList(s: string, list: readonly HookResult[]): string {
  for (let i = 0; i < list.length; i++) s = appendHook(s, list[i]!, i > 0);
  return s;
}

/** How the results open: as a bare value, or as an object's `hook_results` member (its first, or after others). */
export type HookResultsMember = 'value' | 'first' | 'next';
const OPEN: Record<HookResultsMember, string> = {
  value: '{"before_request_hooks":[',
  first: '"hook_results":{"before_request_hooks":[',
  next: ',"hook_results":{"before_request_hooks":[',
};

/**
 * `head`, then `JSON.stringify(hookResultsBody(account))` (as the `member` it is), then `}` when
 * `closeObject` (the object the member belongs to ends there), faster: the constant text on either
 * side joins the results' first and last pieces.
 */
export function appendHookResults(head: string, a: HookAccount, member: HookResultsMember = 'value', closeObject = false): string {
  let s = appendList(head + OPEN[member], a.before);
  s = appendList(`${s}],"after_request_hooks":[`, a.after);
  return s + (closeObject ? ']}}' : ']}');
}

/** `JSON.stringify(hookResultsBody(account))`, faster. */
export function hookResultsJson(a: HookAccount): string {
  return appendHookResults('', a);
}
