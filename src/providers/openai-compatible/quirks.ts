import { createHash } from 'node:crypto';
import type { OpenAIQuirks } from './descriptors.js';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A foreign tool-call id → an id of `length` characters of [A-Za-z0-9], the same for the same input
 * (a digest, so the mapping is stable across turns and gateway instances without any state).
 */
export function stableToolCallId(id: string, length: number): string {
  const d = createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; i < length; i++) out += ALNUM[d[i % d.length]! % ALNUM.length];
  return out;
}

type Msg = Record<string, unknown>;

/** One message with its tool-call ids rewritten and refused assistant fields removed; the same object when nothing changes. */
function fixMessage(m: Msg, q: OpenAIQuirks): Msg {
  let out = m;
  const copy = (): Msg => (out === m ? (out = { ...m }) : out);
  if (m.role === 'assistant' && q.dropAssistantFields) {
    for (const f of q.dropAssistantFields) if (m[f] !== undefined) delete copy()[f];
  }
  const ids = q.toolCallIds;
  if (ids) {
    if (typeof m.tool_call_id === 'string' && !ids.pattern.test(m.tool_call_id)) copy().tool_call_id = stableToolCallId(m.tool_call_id, ids.length);
    if (Array.isArray(m.tool_calls) && m.tool_calls.some((c) => typeof (c as Msg)?.id === 'string' && !ids.pattern.test((c as Msg).id as string))) {
      copy().tool_calls = (m.tool_calls as Msg[]).map((c) =>
        typeof c?.id === 'string' && !ids.pattern.test(c.id) ? { ...c, id: stableToolCallId(c.id, ids.length) } : c,
      );
    }
  }
  return out;
}

/**
 * The request body as the host wants it: fields renamed or dropped, messages fixed. Returns the
 * same object when no quirk applies (the common case allocates nothing).
 */
export function applyRequestQuirks(body: Record<string, unknown>, q: OpenAIQuirks | undefined): Record<string, unknown> {
  if (!q) return body;
  let out = body;
  const copy = (): Record<string, unknown> => (out === body ? (out = { ...body }) : out);
  if (q.renameFields) {
    for (const from in q.renameFields) {
      if (body[from] === undefined) continue;
      const to = q.renameFields[from]!;
      const o = copy();
      // The host's own name, when the client also sent it, wins (it was meant for this host).
      if (o[to] === undefined) o[to] = body[from];
      delete o[from];
    }
  }
  if (q.dropFields) for (const f of q.dropFields) if (body[f] !== undefined) delete copy()[f];
  if ((q.toolCallIds || q.dropAssistantFields) && Array.isArray(body.messages)) {
    const msgs = body.messages as Msg[];
    let fixed: Msg[] | undefined;
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i]!;
      const f = m && typeof m === 'object' ? fixMessage(m, q) : m;
      if (f !== m) (fixed ??= msgs.slice())[i] = f;
    }
    if (fixed) copy().messages = fixed;
  }
  return out;
}

/** A raw chunk or body with the host's own finish reasons mapped to OpenAI's; the same text when none occurs. */
export function mapFinishReasons(text: string, map: Readonly<Record<string, string>> | undefined): string {
  if (!map) return text;
  let out = text;
  for (const from in map) {
    if (!out.includes(from)) continue; // the cheap test first: a chunk rarely carries one
    out = out.replace(new RegExp(`"finish_reason"\\s*:\\s*"${from}"`, 'g'), `"finish_reason":"${map[from]}"`);
  }
  return out;
}

/** The value at a path of keys, when every step is an object. */
export function valueAt(obj: unknown, path: readonly string[]): unknown {
  let v = obj;
  for (const k of path) {
    if (!v || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}
