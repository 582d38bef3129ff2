/**
 * The texts of a Responses API body for checks (src/checks/text.ts): the request's input items and
 * instructions, the answer's output messages; and their rewrites (copy on write, undefined when
 * nothing changed). Pure functions over parsed JSON.
 */
import { rewriteContent, type Rewrite } from './rewrite-content.js';

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A message item's content: a string, or its text parts (input_text, output_text) joined with "\n". */
function itemText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((p) => (isObj(p) && typeof p.text === 'string' ? [p.text] : [])).join('\n');
}

/** `text`: the last user message (else the last message, else the instructions); `allText`: the instructions and every message. */
export function responsesRequestTexts(body: Json): { text: string; allText: string } {
  const all: string[] = typeof body.instructions === 'string' ? [body.instructions] : [];
  let user: string | undefined;
  if (typeof body.input === 'string') {
    all.push(body.input);
    user = body.input;
  } else if (Array.isArray(body.input)) {
    for (const it of body.input) {
      if (!isObj(it) || it.content === undefined) continue;
      const t = itemText(it.content);
      all.push(t);
      if (it.role === 'user') user = t;
    }
  }
  return { text: user ?? all[all.length - 1] ?? '', allText: all.join('\n') };
}

/** The output messages' texts (and refusals), joined with "\n". */
export function responsesOutputText(body: unknown): string {
  if (!isObj(body) || !Array.isArray(body.output)) return '';
  const out: string[] = [];
  for (const it of body.output) {
    if (!isObj(it) || it.type !== 'message' || !Array.isArray(it.content)) continue;
    for (const p of it.content) {
      if (!isObj(p)) continue;
      if (typeof p.text === 'string') out.push(p.text);
      if (typeof p.refusal === 'string') out.push(p.refusal);
    }
  }
  return out.join('\n');
}

/** Every message item's content rewritten; the new list, or undefined when unchanged. */
function rewriteItems(items: unknown[], fn: Rewrite): unknown[] | undefined {
  let changed = false;
  const next = items.map((it) => {
    if (!isObj(it) || it.content === undefined) return it;
    const content = rewriteContent(it.content, fn);
    if (content === it.content) return it;
    changed = true;
    return { ...it, content };
  });
  return changed ? next : undefined;
}

/** The input (a string or its message items) rewritten. */
export function rewriteResponsesRequest(body: Json, fn: Rewrite): Json | undefined {
  if (typeof body.input === 'string') {
    const input = fn(body.input);
    return input === body.input ? undefined : { ...body, input };
  }
  const input = Array.isArray(body.input) ? rewriteItems(body.input, fn) : undefined;
  return input ? { ...body, input } : undefined;
}

/** The output messages' texts rewritten. */
export function rewriteResponsesOutput(body: unknown, fn: Rewrite): Json | undefined {
  if (!isObj(body) || !Array.isArray(body.output)) return undefined;
  const output = rewriteItems(body.output, fn);
  return output ? { ...body, output } : undefined;
}
