import { z } from 'zod';
import { compileTemplate, TemplateError } from '../util/template.js';
import { nameBasedUuid } from '../util/name-uuid.js';
import { ChatMessage, CompletionBody, ChatCompletionBody } from './bodies.js';

/**
 * A prompt template's writable fields (docs/prompts.md), one schema for the API's POST/PUT bodies
 * and the bootstrap file's `prompts` entries. Strict: an unknown field is a 400 naming it. Every
 * text a template renders is parsed here (a syntax error names its field), and `parameters` are
 * validated as the request body would be, so a stored template never fails at request time for
 * anything but a missing variable.
 */

/** Body fields a template's `parameters` may not set, and why. */
export const RESERVED_PARAMETERS: Readonly<Record<string, string>> = {
  model: 'set the template\'s own model field',
  messages: 'set the template\'s own messages field',
  prompt: 'set the template\'s own prompt field',
  variables: 'variables come with each request',
  stream: 'each request chooses whether it streams',
  stream_options: 'each request chooses whether it streams',
};

export const MAX_TEMPLATE_MESSAGES = 256;
export const MAX_TEMPLATE_TEXT = 200_000;

const text = z.string().max(MAX_TEMPLATE_TEXT, `at most ${MAX_TEMPLATE_TEXT} characters`);

type Ctx = z.core.ParsePayload;

/** What is wrong with a template text, or undefined when it compiles. */
function templateProblem(source: string): string | undefined {
  try {
    compileTemplate(source);
    return undefined;
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    return `not a valid template: ${e.message}`;
  }
}

function compiles(source: string, ctx: Ctx, path: (string | number)[]): void {
  const problem = templateProblem(source);
  if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, path, input: source });
}

/** A chat message as a request would send it; its text (string content, text parts) is a template. */
const TemplateMessage = ChatMessage.check((ctx) => {
  const content = ctx.value.content;
  if (typeof content === 'string') compiles(content, ctx, ['content']);
  else if (Array.isArray(content)) {
    content.forEach((part, i) => {
      const p = part as { type?: unknown; text?: unknown };
      if (p !== null && typeof p === 'object' && p.type === 'text' && typeof p.text === 'string') compiles(p.text, ctx, ['content', i, 'text']);
    });
  }
});

const PROMPT_FIELDS = {
  name: z.string().min(1, 'must not be empty').max(256, 'at most 256 characters'),
  /** Chat completions: these messages come first, the request's own after them. */
  messages: z.array(TemplateMessage).min(1, 'at least one message').max(MAX_TEMPLATE_MESSAGES, `at most ${MAX_TEMPLATE_MESSAGES}`).optional(),
  /** Completions: the prompt. */
  prompt: text.optional(),
  model: z.string().min(1, 'must not be empty').optional(),
  /** Body fields (temperature, max_tokens, ...) a request gets unless it sets them itself. */
  parameters: z.record(z.string(), z.unknown()).default({}),
};

const scopeId = z.string().min(1, 'must not be empty').max(128, 'at most 128 characters');

/** What a request body would be with these parameters: its issues under `parameters.<field>`. */
function bodyIssues(schema: z.ZodType, base: Record<string, unknown>, parameters: Record<string, unknown>): z.core.$ZodIssue[] {
  const r = schema.safeParse({ ...parameters, ...base });
  return r.success ? [] : r.error.issues.filter((i) => typeof i.path[0] === 'string' && Object.hasOwn(parameters, i.path[0]));
}

/**
 * The template as a whole: it renders something (messages, a prompt, or both), parameters set no
 * reserved field, and they pass the body schema of each endpoint the template serves (a template
 * with messages serves chat completions, one with a prompt completions; both: both).
 */
function wholeTemplate(t: { messages?: unknown[] | undefined; prompt?: string | undefined; parameters: Record<string, unknown> }, ctx: z.RefinementCtx): void {
  if (t.messages === undefined && t.prompt === undefined) {
    ctx.addIssue({ code: 'custom', message: 'a template has messages (chat completions), a prompt (completions), or both', path: ['messages'] });
  }
  const problem = t.prompt === undefined ? undefined : templateProblem(t.prompt);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem, path: ['prompt'] });
  const reserved = Object.keys(t.parameters).filter((k) => RESERVED_PARAMETERS[k] !== undefined);
  for (const k of reserved) ctx.addIssue({ code: 'custom', message: `not a parameter: ${RESERVED_PARAMETERS[k]}`, path: ['parameters', k] });
  if (reserved.length > 0) return;
  const issues = [
    ...(t.messages !== undefined ? bodyIssues(ChatCompletionBody, { model: 'm', messages: [{ role: 'user', content: 'x' }] }, t.parameters) : []),
    ...(t.prompt !== undefined ? bodyIssues(CompletionBody, { model: 'm', prompt: 'x' }, t.parameters) : []),
  ];
  for (const i of issues) ctx.addIssue({ code: 'custom', message: i.message, path: ['parameters', ...(i.path as (string | number)[])] });
}

/** The whole-template rules run once every field is valid on its own. */
const whenFieldsValid = { when: (p: Ctx) => p.issues.length === 0 };

/** The body of POST and PUT /v1/prompts. */
export const PromptBodySchema = z
  .strictObject({ ...PROMPT_FIELDS, workspace_id: scopeId.optional(), organisation_id: scopeId.optional() })
  .superRefine(wholeTemplate, whenFieldsValid);
export type PromptBody = z.infer<typeof PromptBodySchema>;

/** A bootstrap entry: the same body, plus an optional fixed `id` (else one derived from its scope and name). */
export const PromptEntrySchema = z
  .strictObject({ id: z.uuid('must be a UUID').optional(), ...PROMPT_FIELDS, workspace_id: scopeId.optional(), organisation_id: scopeId.optional() })
  .superRefine(wholeTemplate, whenFieldsValid);
export type PromptEntry = z.infer<typeof PromptEntrySchema>;

/** The id of a bootstrap entry: its `id`, else derived from its scope and name (the same at every start). */
export function declaredPromptId(e: Pick<PromptEntry, 'id' | 'name' | 'workspace_id' | 'organisation_id'>): string {
  return e.id?.toLowerCase() ?? nameBasedUuid('prompt', e.organisation_id ?? '', e.workspace_id ?? '', e.name);
}
