import { z } from 'zod';
import type { CheckDef } from './types.js';

const Params = z.strictObject({
  prefix: z.string().min(1),
  applyToRole: z.enum(['system', 'developer', 'user', 'assistant']).default('user'),
  /** true: prepend to the first message of that role; false: insert a new message before it. */
  addToExisting: z.boolean().default(true),
  /** true: change nothing when a message of that role exists (only add one when none does). */
  onlyIfEmpty: z.boolean().default(false),
});
type Params = z.infer<typeof Params>;

type Json = Record<string, unknown>;

function prependContent(content: unknown, prefix: string): unknown {
  if (typeof content === 'string' || content === null || content === undefined) return prefix + (content ?? '');
  if (Array.isArray(content)) {
    const i = content.findIndex((p) => p && typeof p === 'object' && typeof (p as Json).text === 'string');
    if (i < 0) return [{ type: 'text', text: prefix }, ...content];
    const out = content.slice();
    out[i] = { ...(content[i] as Json), text: prefix + ((content[i] as Json).text as string) };
    return out;
  }
  return content;
}

/** A Messages request's top-level `system` with the prefix: prepended to its first text, or a block of its own before it. */
function prefixedSystem(body: Json, p: Params): { body: Json } | { reason: string } {
  const system = body.system;
  const present = system !== undefined && system !== '' && !(Array.isArray(system) && system.length === 0);
  if (present && p.onlyIfEmpty) return { reason: 'a system prompt exists' };
  if (!present) return { body: { ...body, system: p.prefix } };
  if (p.addToExisting) return { body: { ...body, system: prependContent(system, p.prefix) } };
  const blocks = typeof system === 'string' ? [{ type: 'text', text: system }] : (system as unknown[]);
  return { body: { ...body, system: [{ type: 'text', text: p.prefix }, ...blocks] } };
}

/**
 * Mutator (request only): a Messages request with `applyToRole` system or developer — the prefix goes
 * into its top-level `system`; chat (and a Messages request's turns) — prepends `prefix` to the first
 * message of `applyToRole`, or inserts a new message (a system or developer message goes first, others last) when there is none, or when
 * `addToExisting` is false (then just before the first one); completions — prepends it to each
 * prompt. Embeddings and Responses API bodies are left alone (`data.skipped`). Always passes.
 */
export const addPrefix: CheckDef<Params> = {
  id: 'addPrefix',
  params: Params,
  mutator: true,
  phases: ['request'],
  run(input, p) {
    const body = input.request.body;
    if (input.phase !== 'request' || !body) return { verdict: true, data: { skipped: 'not a request' } };
    if (input.endpoint === 'embeddings' || input.endpoint === 'responses') return { verdict: true, data: { skipped: input.endpoint } };
    if (input.endpoint === 'completions') {
      const prompt = body.prompt;
      const next = typeof prompt === 'string' ? p.prefix + prompt : Array.isArray(prompt) ? prompt.map((x) => (typeof x === 'string' ? p.prefix + x : x)) : undefined;
      if (next === undefined) return { verdict: true, data: { skipped: 'no text prompt' } };
      return { verdict: true, data: { applied: 'prompt' }, transformed: { request: { body: { ...body, prompt: next } } } };
    }
    if (input.endpoint === 'messages' && (p.applyToRole === 'system' || p.applyToRole === 'developer')) {
      const r = prefixedSystem(body, p);
      if ('reason' in r) return { verdict: true, data: { applied: false, reason: r.reason } };
      return { verdict: true, data: { applied: 'system' }, transformed: { request: { body: r.body } } };
    }
    const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
    const at = messages.findIndex((m) => m && typeof m === 'object' && (m as Json).role === p.applyToRole);
    let next: unknown[];
    if (at >= 0 && p.onlyIfEmpty) return { verdict: true, data: { applied: false, reason: `a ${p.applyToRole} message exists` } };
    if (at >= 0 && p.addToExisting) {
      next = messages.slice();
      next[at] = { ...(messages[at] as Json), content: prependContent((messages[at] as Json).content, p.prefix) };
    } else if (at >= 0) {
      next = [...messages.slice(0, at), { role: p.applyToRole, content: p.prefix }, ...messages.slice(at)];
    } else if (p.applyToRole === 'system' || p.applyToRole === 'developer') {
      next = [{ role: p.applyToRole, content: p.prefix }, ...messages];
    } else {
      next = [...messages, { role: p.applyToRole, content: p.prefix }];
    }
    return { verdict: true, data: { applied: p.applyToRole }, transformed: { request: { body: { ...body, messages: next } } } };
  },
};
