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
 * A template is parsed once (`compileTemplate`) and rendered many times (`renderTemplate`).
 */
import Mustache from 'mustache';

/** A compiled template: its text when it has no tags (rendering it costs nothing), else mustache's tokens. */
export interface Template {
  readonly source: string;
  readonly text?: string;
  readonly tokens?: readonly unknown[];
}

/** A template that does not parse, or uses what is refused; the message says where. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}

type Token = [string, string, number, number, Token[]?, ...unknown[]];

/** Value tags become one kind (nothing is escaped anyway); a partial is refused. */
function prepare(tokens: Token[]): void {
  for (const t of tokens) {
    if (t[0] === '&') t[0] = 'name';
    else if (t[0] === '>') throw new TemplateError(`partials are not supported ({{> ${t[1]}}} at character ${t[2]})`);
    else if ((t[0] === '#' || t[0] === '^') && t[4]) prepare(t[4]);
  }
}

export function compileTemplate(source: string): Template {
  let tokens: Token[];
  try {
    // A writer of its own: the default one caches every template it parses, without bound.
    tokens = new Mustache.Writer().parse(source) as Token[];
  } catch (e) {
    throw new TemplateError((e as Error).message);
  }
  prepare(tokens);
  if (tokens.length === 0) return { source, text: '' };
  if (tokens.length === 1 && tokens[0]![0] === 'text') return { source, text: tokens[0]![1] };
  return { source, tokens };
}

const MISSING: unique symbol = Symbol('missing');

/** `a.b.c` in one view: own properties only (a string's `length` is its own). */
function resolve(view: unknown, name: string): unknown {
  if (name === '.') return view;
  let v: unknown = view;
  let from = 0;
  for (;;) {
    const dot = name.indexOf('.', from);
    const key = dot < 0 ? name.slice(from) : name.slice(from, dot);
    if (v === null || v === undefined || !Object.hasOwn(v as object, key)) return MISSING;
    v = (v as Record<string, unknown>)[key];
    if (dot < 0) return v;
    from = dot + 1;
  }
}

/** A context whose lookups see own data only; a miss in every enclosing view is `undefined`. */
class OwnContext extends Mustache.Context {
  override push(view: unknown): OwnContext {
    return new OwnContext(view, this);
  }

  override lookup(name: string): unknown {
    for (let c: Mustache.Context | undefined = this; c !== undefined; c = c.parent) {
      const v = resolve(c.view, name);
      if (v !== MISSING) return v;
    }
    return undefined;
  }
}

/** What a render carries through mustache's config argument. */
interface RenderState {
  missing: Set<string>;
}

/** Writes values unescaped (non-strings as JSON) and notes the names that resolve nowhere. */
class PromptWriter extends Mustache.Writer {
  override escapedValue(token: string[], context: Mustache.Context, config?: Mustache.RenderOptions): string {
    const name = token[1]!;
    const value: unknown = context.lookup(name);
    if (value === undefined) {
      (config as unknown as RenderState).missing.add(name);
      return '';
    }
    if (value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

const writer = new PromptWriter();

/**
 * Renders `t` with `variables`. Every name written out that resolves nowhere is added to `missing`
 * (in template order) and renders empty meanwhile: the caller refuses the result when any is.
 */
export function renderTemplate(t: Template, variables: Record<string, unknown>, missing: Set<string>): string {
  if (t.text !== undefined) return t.text;
  const state: RenderState = { missing };
  return writer.renderTokens(t.tokens as string[][], new OwnContext(variables), undefined, t.source, state as unknown as Mustache.RenderOptions);
}
