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

function renderNodes(nodes: readonly TemplateNode[], stack: unknown[], missing: Set<string>): string {
  let out = '';
  for (const n of nodes) {
    if (typeof n === 'string') {
      out += n;
      continue;
    }
    const v = lookup(stack, n.path);
    if (!('children' in n)) {
      if (v === MISSING || v === undefined) missing.add(n.name);
      else if (v !== null) out += typeof v === 'string' ? v : JSON.stringify(v);
    } else if (n.inverted) {
      if (v === MISSING || empty(v)) out += renderNodes(n.children, stack, missing);
    } else if (v !== MISSING && !empty(v)) {
      // A list: once per item; an object, string or number: once, in its context; true: once.
      const items = Array.isArray(v) ? v : typeof v === 'object' || typeof v === 'string' || typeof v === 'number' ? [v] : undefined;
      if (!items) out += renderNodes(n.children, stack, missing);
      else {
        for (const item of items) {
          stack.push(item);
          out += renderNodes(n.children, stack, missing);
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
 */
export function renderTemplate(t: Template, variables: Record<string, unknown>, missing: Set<string>): string {
  if (t.text !== undefined) return t.text;
  return renderNodes(t.nodes!, [variables], missing);
}
