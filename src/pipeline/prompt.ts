import { GatewayError } from '../errors/gateway-error.js';
import type { PromptRef } from '../plan/types.js';
import type { Endpoint } from '../providers/types.js';
import type { PromptRecord } from '../state/prompt-store.js';
import type { ResourceScope } from '../state/resource-store.js';
import { compileTemplate, renderBudget, renderTemplate, TemplateLimitError, type RenderBudget, type Template } from '../util/template.js';

/** The prompt store's synchronous read side (with Redis: its mirror). */
export type PromptLookup = (idOrSlug: string, versionId: string | undefined, scope: ResourceScope) => PromptRecord | undefined;

/** The prompt version that rendered a request, as its log line and record name it (a `PromptRecord` is one). */
export interface PromptUse {
  readonly id: string;
  readonly slug: string;
  readonly version_id: string;
}

/** Where `render` notes the version it rendered (the exchange: its log line and record read it there). */
export interface PromptUseSink {
  prompt: PromptUse | undefined;
}

/** The scope a caller (the request's gateway key) sees prompts in: the management APIs' rule, handed in. */
export type CallerScope<K> = (key: K) => ResourceScope;

/** A template message: the message as stored, and its text compiled (string content, or per text part). */
interface CompiledMessage {
  message: Record<string, unknown>;
  content?: Template;
  /** Content parts: a compiled template for each text part, undefined for the others (kept as they are). */
  parts?: (Template | undefined)[];
}

/** One version, parsed once. */
interface CompiledPrompt {
  messages?: CompiledMessage[];
  prompt?: Template;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function compileMessage(m: Json): CompiledMessage {
  const c = m.content;
  if (typeof c === 'string') return { message: m, content: compileTemplate(c) };
  if (Array.isArray(c)) {
    const parts = c.map((p: unknown) => (isObject(p) && p.type === 'text' && typeof p.text === 'string' ? compileTemplate(p.text) : undefined));
    if (parts.some((p) => p !== undefined)) return { message: m, parts };
  }
  return { message: m };
}

function renderMessage(cm: CompiledMessage, vars: Json, missing: Set<string>, budget: RenderBudget): Json {
  if (cm.content) return { ...cm.message, content: renderTemplate(cm.content, vars, missing, budget) };
  if (cm.parts) {
    const parts = cm.message.content as unknown[];
    return { ...cm.message, content: parts.map((p, i) => (cm.parts![i] ? { ...(p as Json), text: renderTemplate(cm.parts![i]!, vars, missing, budget) } : p)) };
  }
  return cm.message;
}

/**
 * Renders a request's prompt template into its body, before the body is validated and the request
 * routed (docs/prompts.md): the plan names the prompt (`prompt_id` at the config's root), the body
 * sends `variables`. Each version is parsed once (kept per stored version object, so a version that
 * is deleted or re-read takes its parse with it).
 *
 * The body the request continues with: the template's `model` and `parameters`, then every field of
 * the request's body but `variables` over them (the request wins); the template's messages before
 * the request's own (chat), or the template's prompt (completions, where the request may not send
 * one too). `override_params` still win over both, per target, as for any request.
 */
export class PromptRenderer<K> {
  private readonly compiled = new WeakMap<PromptRecord, CompiledPrompt>();
  private parsed = 0;

  /**
   * `limits`: what one request's rendering may cost (all its templates together): steps (text pieces,
   * values and section items) and characters written. Over either: 400 template_too_large.
   */
  constructor(
    private readonly lookup: PromptLookup,
    private readonly scopeOf: CallerScope<K>,
    private readonly limits: { maxSteps?: number; maxOutput?: number } = {},
  ) {}

  /** Versions parsed so far (each once, however many requests render it). */
  get versionsParsed(): number {
    return this.parsed;
  }

  /**
   * `raw` (the parsed JSON body, not yet validated) → the body to validate. Without a prompt the body
   * is kept as it is, but `variables` is refused: nothing would render it, and a provider would not
   * know it. `key`: the request's gateway key; a prompt outside its scope is unknown. `used`, when
   * given, is told the version found (before its variables are checked, so a 400 for a missing one is
   * logged with the version that needs it).
   */
  render(prompt: PromptRef | undefined, endpoint: Endpoint, raw: unknown, key: K, used?: PromptUseSink): unknown {
    if (!prompt) {
      if (isObject(raw) && raw.variables !== undefined) {
        throw new GatewayError('invalid_request_body', 'Invalid request body: variables: the config names no prompt_id, so there is no template to render them into.', {
          param: 'variables',
          issues: [{ path: ['variables'], message: 'used only with a config that names prompt_id' }],
        });
      }
      return raw;
    }
    if (endpoint !== 'chat' && endpoint !== 'completions') {
      throw configError(prompt, `a prompt template renders chat completions and completions requests, not ${endpoint} requests`);
    }
    const record = this.lookup(prompt.ref, prompt.version_id, this.scopeOf(key));
    if (!record) {
      const what = prompt.version_id === undefined ? `the prompt "${prompt.ref}"` : `version ${prompt.version_id} of the prompt "${prompt.ref}"`;
      throw configError(prompt, `names ${what}, which does not exist (for this gateway key)`);
    }
    if (used) used.prompt = record;
    if (!isObject(raw)) return raw; // the body's own 400 follows
    const vars = raw.variables ?? {};
    if (!isObject(vars)) {
      throw new GatewayError('invalid_request_body', 'Invalid request body: variables: must be an object of the template\'s variables.', {
        param: 'variables',
        issues: [{ path: ['variables'], message: 'must be an object' }],
      });
    }
    const c = this.compile(record);
    const kind = endpoint === 'chat' ? c.messages : c.prompt;
    if (kind === undefined) {
      const has = endpoint === 'chat' ? 'a prompt and no messages: it renders completions' : 'messages and no prompt: it renders chat completions';
      throw configError(prompt, `the prompt "${record.slug}" has ${has}`);
    }
    const missing = new Set<string>();
    const budget = renderBudget(this.limits.maxSteps, this.limits.maxOutput);
    try {
      return this.fill(record, c, endpoint, raw, vars, missing, budget);
    } catch (e) {
      if (e instanceof TemplateLimitError) throw tooLarge(record, e);
      throw e;
    }
  }

  private fill(record: PromptRecord, c: CompiledPrompt, endpoint: Endpoint, raw: Json, vars: Json, missing: Set<string>, budget: RenderBudget): Json {
    const body: Json = {};
    if (record.model !== undefined) body.model = record.model;
    Object.assign(body, record.parameters);
    for (const k in raw) if (k !== 'variables') body[k] = raw[k];
    if (endpoint === 'chat') {
      const own = raw.messages;
      const rendered = c.messages!.map((m) => renderMessage(m, vars, missing, budget));
      body.messages = own === undefined ? rendered : Array.isArray(own) ? [...rendered, ...own] : own;
    } else {
      if (raw.prompt !== undefined) {
        throw new GatewayError('invalid_request_body', `Invalid request body: prompt: the prompt template "${record.slug}" supplies the prompt; send variables instead.`, {
          param: 'prompt',
          issues: [{ path: ['prompt'], message: 'the prompt template supplies the prompt' }],
        });
      }
      body.prompt = renderTemplate(c.prompt!, vars, missing, budget);
    }
    if (missing.size > 0) throw missingVariables(record, [...missing]);
    return body;
  }

  private compile(record: PromptRecord): CompiledPrompt {
    let c = this.compiled.get(record);
    if (!c) {
      c = {};
      if (record.messages) c.messages = record.messages.map(compileMessage);
      if (record.prompt !== undefined) c.prompt = compileTemplate(record.prompt);
      this.compiled.set(record, c);
      this.parsed++;
    }
    return c;
  }
}

function configError(prompt: PromptRef, why: string): GatewayError {
  return new GatewayError('invalid_config', `${prompt.param} ${why}.`, {
    param: prompt.param,
    issues: [{ path: prompt.param.split('.'), message: why }],
  });
}

function tooLarge(record: PromptRecord, e: TemplateLimitError): GatewayError {
  const param = e.variable === undefined ? 'variables' : `variables.${e.variable}`;
  const where = e.variable === undefined ? '' : ` (while writing ${param})`;
  const option = e.what === 'steps' ? '--template-max-steps' : '--template-max-output';
  return new GatewayError('template_too_large', `The prompt "${record.slug}" ${e.message}${where}, over this gateway's ${option}: send fewer or shorter items.`, {
    param,
    issues: [{ path: param.split('.'), message: e.message }],
  });
}

function missingVariables(record: PromptRecord, names: string[]): GatewayError {
  const list = names.map((n) => `variables.${n}`);
  return new GatewayError('invalid_request_body', `Invalid request body: the prompt "${record.slug}" needs ${list.join(', ')}, which the request does not give.`, {
    param: list[0]!,
    issues: names.map((n) => ({ path: ['variables', ...n.split('.')], message: 'required by the prompt template' })),
  });
}
