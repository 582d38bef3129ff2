/**
 * Text templates in mustache syntax (mustache.js), for prompts: `{{name}}`, `{{user.name}}`,
 * sections `{{#items}}...{{/items}}`, inverted sections `{{^x}}...{{/x}}`, comments `{{! ... }}`,
 * set delimiters `{{=<% %>=}}`. Differences from mustache.js's `render`, on purpose:
 *
 * - Nothing is HTML-escaped: these are prompts, not HTML. `{{x}}`, `{{{x}}}` and `{{&x}}` are the same.
 * - A value that is not a string is written as JSON (`{{n}}` with 3 → `3`, an object → `{"a":1}`).
 * - Names resolve to own data only (never `constructor`, `toString` or another inherited property),
 *   and a name written out that resolves nowhere is reported as missing, not rendered empty. A
 *   section whose name is absent is not rendered (mustache's falsy), and `null` renders empty.
 * - Partials (`{{> name}}`) are refused: nothing would fill them.
 *
 * A template is parsed once (`compileTemplate`, mustache.js's parser) and rendered many times
 * (`renderTemplate`, a walk over the parsed nodes).
 *
 * Rendering is bounded (`RenderBudget`): nested sections multiply (six levels of 20-item lists are
 * 64 million passes), so a small request could otherwise keep the event loop busy for seconds or
 * write a body of many megabytes. Each node written and each section item counts a step; the
 * output is counted in characters; over either cap rendering stops with a TemplateLimitError.
 */
import Mustache from 'mustache';

/** A value tag: the name as written, and its dotted path (`.` is the current item: no segments). */
interface NameNode {
  readonly name: string;
  readonly path: readonly string[];
}

/** A section (`{{#x}}`) or an inverted section (`{{^x}}`) and what it encloses. */
interface SectionNode extends NameNode {
  readonly inverted: boolean;
  readonly children: readonly TemplateNode[];
}

/** Text, a value, or a section. */
type TemplateNode = string | NameNode | SectionNode;

/** A compiled template: its text when it has no tags (rendering it costs nothing), else its nodes. */
export interface Template {
  readonly source: string;
  readonly text?: string;
  readonly nodes?: readonly TemplateNode[];
}

/** A template that does not parse, or uses what is refused; the message says where. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}

/** mustache.js's tokens: `[type, value, start, end, children?, ...]`. */
type Token = [string, string, number, number, Token[]?, ...unknown[]];

const pathOf = (name: string): string[] => (name === '.' ? [] : name.split('.'));

/** mustache's tokens → nodes: value tags are one kind (nothing is escaped), comments and delimiter changes drop out, a partial is refused. */
function toNodes(tokens: readonly Token[]): TemplateNode[] {
  const out: TemplateNode[] = [];
  for (const t of tokens) {
    const [type, value] = t;
    if (type === 'text') out.push(value);
    else if (type === 'name' || type === '&') out.push({ name: value, path: pathOf(value) });
    else if (type === '#' || type === '^') out.push({ name: value, path: pathOf(value), inverted: type === '^', children: toNodes(t[4] ?? []) });
    else if (type === '>') throw new TemplateError(`partials are not supported ({{> ${value}}} at character ${t[2]})`);
  }
  return out;
}

/**
 * Parses a template with mustache.js's parser (syntax errors name the character). Rendering is this
 * module's own: a walk over the parsed nodes.
 */
export function compileTemplate(source: string): Template {
  let tokens: Token[];
  try {
    // A writer of its own: the default one caches every template it parses, without bound.
    tokens = new Mustache.Writer().parse(source) as Token[];
  } catch (e) {
    throw new TemplateError((e as Error).message);
  }
  const nodes = toNodes(tokens);
  if (nodes.length === 0) return { source, text: '' };
  if (nodes.length === 1 && typeof nodes[0] === 'string') return { source, text: nodes[0] };
  return { source, nodes };
}

/** Rendering went over a cap of its RenderBudget; `name` is the variable being written or expanded. */
export class TemplateLimitError extends Error {
  override name = 'TemplateLimitError';
  constructor(
    readonly what: 'steps' | 'output',
    readonly limit: number,
    readonly variable: string | undefined,
  ) {
    super(what === 'steps' ? `rendering takes more than ${limit} steps` : `rendering writes more than ${limit} characters`);
  }
}

/** What one request's rendering may cost, shared by every template it renders (spent as it goes). */
export interface RenderBudget {
  /** Steps left: one per node written and per section item. */
  steps: number;
  /** Characters left to write. */
  output: number;
  readonly maxSteps: number;
  readonly maxOutput: number;
}

export const DEFAULT_TEMPLATE_MAX_STEPS = 100_000;
export const DEFAULT_TEMPLATE_MAX_OUTPUT = 1024 * 1024;

export function renderBudget(maxSteps = DEFAULT_TEMPLATE_MAX_STEPS, maxOutput = DEFAULT_TEMPLATE_MAX_OUTPUT): RenderBudget {
  return { steps: maxSteps, output: maxOutput, maxSteps, maxOutput };
}

/** Spends one step and `chars` of output; `variable`: the innermost section or value being rendered. */
function spend(b: RenderBudget, chars: number, variable: string | undefined): void {
  if (--b.steps < 0) throw new TemplateLimitError('steps', b.maxSteps, variable);
  if ((b.output -= chars) < 0) throw new TemplateLimitError('output', b.maxOutput, variable);
}

const MISSING: unique symbol = Symbol('missing');

/** A dotted path in the innermost view that has it all, own properties only (a string's `length` is its own). */
function lookup(stack: readonly unknown[], path: readonly string[]): unknown {
  outer: for (let i = stack.length - 1; i >= 0; i--) {
    let v = stack[i];
    for (const key of path) {
      if (v === null || v === undefined || !Object.hasOwn(v as object, key)) continue outer;
      v = (v as Record<string, unknown>)[key];
    }
    return v;
  }
  return MISSING;
}

const empty = (v: unknown): boolean => !v || (Array.isArray(v) && v.length === 0);

function renderNodes(nodes: readonly TemplateNode[], stack: unknown[], missing: Set<string>, b: RenderBudget, section: string | undefined): string {
  let out = '';
  for (const n of nodes) {
    if (typeof n === 'string') {
      spend(b, n.length, section);
      out += n;
      continue;
    }
    const v = lookup(stack, n.path);
    if (!('children' in n)) {
      if (v === MISSING || v === undefined) missing.add(n.name);
      else if (v !== null) {
        const text = typeof v === 'string' ? v : JSON.stringify(v);
        spend(b, text.length, n.name);
        out += text;
      }
    } else if (n.inverted) {
      if (v === MISSING || empty(v)) out += renderNodes(n.children, stack, missing, b, n.name);
    } else if (v !== MISSING && !empty(v)) {
      // A list: once per item; an object, string or number: once, in its context; true: once.
      const items = Array.isArray(v) ? v : typeof v === 'object' || typeof v === 'string' || typeof v === 'number' ? [v] : undefined;
      if (!items) out += renderNodes(n.children, stack, missing, b, n.name);
      else {
        for (const item of items) {
          spend(b, 0, n.name);
          stack.push(item);
          out += renderNodes(n.children, stack, missing, b, n.name);
          stack.pop();
        }
      }
    }
  }
  return out;
}

/**
 * Renders `t` with `variables`. Every name written out that resolves nowhere is added to `missing`
 * (in template order) and renders empty meanwhile: the caller refuses the result when any is.
 * @throws TemplateLimitError when rendering would go over `budget` (shared by a request's templates).
 */
export function renderTemplate(t: Template, variables: Record<string, unknown>, missing: Set<string>, budget: RenderBudget = renderBudget()): string {
  if (t.text !== undefined) {
    spend(budget, t.text.length, undefined);
    return t.text;
  }
  return renderNodes(t.nodes!, [variables], missing, budget, undefined);
}
