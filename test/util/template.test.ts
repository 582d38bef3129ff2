import { describe, expect, it } from 'vitest';
import { compileTemplate, renderBudget, renderTemplate, TemplateError, TemplateLimitError } from '../../src/util/template.js';

function render(source: string, variables: Record<string, unknown>): { text: string; missing: string[] } {
  const missing = new Set<string>();
  const text = renderTemplate(compileTemplate(source), variables, missing);
  return { text, missing: [...missing] };
}

describe('prompt templates (mustache syntax)', () => {
  it('fills names and dotted names; nothing is HTML-escaped, whatever the tag', () => {
    expect(render('Hi {{name}}, {{user.city}}!', { name: 'Ada', user: { city: 'Paris' } })).toEqual({ text: 'Hi Ada, Paris!', missing: [] });
    const v = { x: `<b>"Tom" & 'Jerry'</b>` };
    expect(render('{{x}}|{{{x}}}|{{& x}}', v).text).toBe(`${v.x}|${v.x}|${v.x}`);
  });

  it('writes a value that is not a string as JSON; null renders empty', () => {
    expect(render('{{n}} {{b}} {{o}} {{a}} [{{z}}]', { n: 3.5, b: false, o: { k: 'v' }, a: [1, 2], z: null }).text).toBe('3.5 false {"k":"v"} [1,2] []');
  });

  it('sections repeat over lists, show for truthy values, inverted sections for absent or empty ones', () => {
    const t = '{{#items}}- {{title}} ({{owner}})\n{{/items}}{{^items}}nothing{{/items}}{{#vip}}VIP{{/vip}}';
    expect(render(t, { items: [{ title: 'a' }, { title: 'b', owner: 'me' }], owner: 'root', vip: true }).text).toBe('- a (root)\n- b (me)\nVIP');
    expect(render(t, { items: [] }).text).toBe('nothing');
    expect(render(t, {}).text).toBe('nothing'); // an absent section is not rendered, and is not "missing"
  });

  it('reports every name written out that resolves nowhere, in template order, once each', () => {
    expect(render('{{a}} {{b.c}} {{a}} {{#list}}{{d}}{{/list}}', { list: [{ d: 1 }, {}] })).toEqual({ text: '   1', missing: ['a', 'b.c', 'd'] });
    expect(render('{{b.c}}', { b: {} }).missing).toEqual(['b.c']);
    expect(render('{{b.c}}', { b: 'text' }).missing).toEqual(['b.c']);
  });

  it('resolves own data only: inherited properties are missing, a string\'s length is its own', () => {
    expect(render('{{constructor}}{{toString}}{{__proto__}}{{x.hasOwnProperty}}', { x: {} }).missing).toEqual(['constructor', 'toString', '__proto__', 'x.hasOwnProperty']);
    expect(render('{{s.length}} {{l.length}}', { s: 'abcd', l: [1, 2] }).text).toBe('4 2');
  });

  it('a template without tags is its text; comments and set delimiters work', () => {
    expect(compileTemplate('plain').text).toBe('plain');
    expect(compileTemplate('').text).toBe('');
    expect(render('a{{! note }}b {{=<% %>=}}<% x %> {{x}}', { x: 1 }).text).toBe('ab 1 {{x}}');
  });

  it('refuses what does not parse, and partials (nothing would fill them)', () => {
    expect(() => compileTemplate('{{#open}}')).toThrow(TemplateError);
    expect(() => compileTemplate('{{x}')).toThrow(/Unclosed tag/);
    expect(() => compileTemplate('{{#a}}{{/b}}')).toThrow(TemplateError);
    expect(() => compileTemplate('x {{#s}}{{> footer}}{{/s}}')).toThrow(/partials are not supported/);
  });
});

describe('rendering is bounded', () => {
  const twenty = Array.from({ length: 20 }, (_, i) => i);

  it('six nested sections over 20-item lists stop at the step cap, naming the section being expanded', () => {
    const t = compileTemplate('{{#a}}{{#b}}{{#c}}{{#d}}{{#e}}{{#f}}x{{/f}}{{/e}}{{/d}}{{/c}}{{/b}}{{/a}}');
    let err: unknown;
    try {
      renderTemplate(t, { a: twenty, b: twenty, c: twenty, d: twenty, e: twenty, f: twenty }, new Set(), renderBudget(10_000, 1 << 20));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TemplateLimitError);
    expect(err).toMatchObject({ what: 'steps', limit: 10_000 });
    expect(['a', 'b', 'c', 'd', 'e', 'f']).toContain((err as TemplateLimitError).variable);
  });

  it('the output cap counts characters written, across templates sharing one budget', () => {
    const budget = renderBudget(1_000, 100);
    expect(renderTemplate(compileTemplate('{{v}}'), { v: 'x'.repeat(60) }, new Set(), budget)).toHaveLength(60);
    expect(() => renderTemplate(compileTemplate('{{v}}'), { v: 'x'.repeat(60) }, new Set(), budget)).toThrow(TemplateLimitError);
    expect(() => renderTemplate(compileTemplate('plain text only'), {}, new Set(), renderBudget(1_000, 5))).toThrow(/more than 5 characters/);
  });

  it('an ordinary template renders within the defaults', () => {
    expect(render('{{#items}}{{.}},{{/items}}', { items: twenty }).text).toBe(`${twenty.join(',')},`);
  });
});
