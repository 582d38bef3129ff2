/**
 * Property tests of what a config or a stored prompt hands the gateway as code: prompt templates
 * (src/util/template.ts) and conditional-routing queries (src/plan/query.ts). Any input either
 * compiles or is refused with the module's typed error (TemplateError, GatewayError
 * `invalid_config`); what compiled never throws when it runs; and the results obey the laws the
 * modules document (mustache's rendering, the query operators' algebra).
 */
import fc from 'fast-check';
import Mustache from 'mustache';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { compileQuery, type Predicate, type QueryInput } from '../../src/plan/query.js';
import { compileTemplate, renderBudget, renderTemplate, TemplateError, TemplateLimitError, type Template } from '../../src/util/template.js';
import { check, PROPERTY_TIMEOUT_MS } from './_fuzz.js';
import { anyPattern, compiles, EVIL_TEXTS } from './_patterns.js';

// ---------------------------------------------------------------------------------------------
// Templates

/** Text made of mustache's own pieces, so that tags, sections, delimiters and their mistakes are common. */
const templateSource = fc
  .array(
    fc.oneof(
      fc.constantFrom('{{', '}}', '{{{', '}}}', '{{#', '{{^', '{{/', '{{!', '{{&', '{{>', '{{=', '=}}', '<% %>', '<%', '%>', '.', ' ', '\n', 'a', 'b', 'a.b', 'items', '|'),
      fc.string({ maxLength: 4 }),
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

/**
 * Variables of any shape: long lists and deep nesting included, so that sections multiply. Rendering
 * is bounded (steps and output), so a render either finishes within the budget or stops with a
 * TemplateLimitError naming the cap.
 */
const variables = fc.dictionary(
  fc.constantFrom('a', 'b', 'items', 'x', 'constructor', '__proto__', 'toString'),
  fc.oneof(
    fc.jsonValue({ maxDepth: 6, depthSize: 'medium' }),
    fc.array(fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.dictionary(fc.constantFrom('a', 'b', 'items', 'x'), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 })), { maxLength: 40 }),
  ),
  { maxKeys: 5 },
) as fc.Arbitrary<Record<string, unknown>>;

/** Budgets: the default, and small ones that amplifying shapes reach within a few runs. */
const budget = fc.oneof(fc.constant(undefined), fc.tuple(fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 0, max: 20_000 })));

/** Renders within `limits` (default caps when undefined): the text, or the TemplateLimitError that stopped it. */
function renderOrLimit(t: Template, vars: Record<string, unknown>, missing: Set<string>, limits: [number, number] | undefined): string | TemplateLimitError {
  const b = limits ? renderBudget(...limits) : renderBudget();
  try {
    const out = renderTemplate(t, vars, missing, b);
    expect(out.length).toBeLessThanOrEqual(b.maxOutput);
    return out;
  } catch (e) {
    if (!(e instanceof TemplateLimitError)) throw e;
    expect(['steps', 'output']).toContain(e.what);
    expect(e.limit).toBe(e.what === 'steps' ? b.maxSteps : b.maxOutput);
    return e;
  }
}

function compileOrError(source: string): Template | TemplateError {
  try {
    return compileTemplate(source);
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e; // anything else fails the property with the raw exception
  }
}

/** A well-formed template from a grammar: text, names and (inverted) sections that close. */
const wellFormed: fc.Arbitrary<string> = fc.letrec<{ node: string; nodes: string }>((tie) => ({
  nodes: fc.array(tie('node'), { maxLength: 4 }).map((ns) => ns.join('')),
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.stringMatching(/^[a-z ,.!\n]{1,8}$/),
    fc.constantFrom('s', 'n', 'list', 'obj.s', 'list.s', '.').map((n) => `{{${n}}}`),
    fc.tuple(fc.constantFrom('#', '^'), fc.constantFrom('s', 'flag', 'list', 'obj', 'none'), tie('nodes')).map(([k, n, inner]) => `{{${k}${n}}}${inner}{{/${n}}}`),
  ),
})).nodes;

/** Variables for `wellFormed` where mustache.js and this renderer agree: strings, booleans, lists of objects of strings. */
const plainVariables = fc.record(
  {
    s: fc.stringMatching(/^[a-z<&>"' ]{0,6}$/),
    n: fc.stringMatching(/^[0-9]{1,3}$/),
    flag: fc.boolean(),
    list: fc.array(fc.record({ s: fc.stringMatching(/^[a-z]{0,4}$/) }, { requiredKeys: [] }), { maxLength: 3 }),
    obj: fc.record({ s: fc.stringMatching(/^[a-z]{0,4}$/) }),
  },
  { requiredKeys: ['s', 'n', 'flag', 'list', 'obj'] },
);

describe('prompt templates (src/util/template.ts)', () => {
  it(
    'any text compiles or is a TemplateError; what compiles renders to a string within its budget or stops with a TemplateLimitError, and reports only names it wrote',
    () => {
      check(
        fc.property(templateSource, variables, budget, (source, vars, limits) => {
          const t = compileOrError(source);
          if (t instanceof TemplateError) {
            expect(t.message.length).toBeGreaterThan(0);
            return;
          }
          const missing = new Set<string>();
          const out = renderOrLimit(t, vars, missing, limits);
          for (const name of missing) expect(source).toContain(name);
          if (typeof out === 'string' && !source.includes('{{')) expect(out).toBe(source);
          if (out instanceof TemplateLimitError && out.variable !== undefined) expect(source).toContain(out.variable);
        }),
        { runs: 1000 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'a well-formed template renders as mustache.js renders it (without HTML escaping) when every name is present',
    () => {
      check(
        fc.property(wellFormed, plainVariables, (source, vars) => {
          const missing = new Set<string>();
          const ours = renderTemplate(compileTemplate(source), vars, missing);
          // `{{.}}` on an object, `{{list}}` and `{{obj}}` write JSON here and "[object Object]" in
          // mustache.js, and `{{list.s}}` is missing here: compare where both define the text.
          if (/\{\{\.\}\}|list\.s|\{\{list\}\}|\{\{obj\}\}/.test(source) || missing.size > 0) return;
          expect(ours).toBe(Mustache.render(source, vars, {}, { escape: (s: string) => s }));
        }),
        { runs: 600 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'sections nested over long lists (output that multiplies) render within the caps or stop with a TemplateLimitError naming a section',
    () => {
      const names = ['a', 'b', 'items', 'x'];
      const nested = fc
        .tuple(fc.array(fc.constantFrom(...names), { minLength: 1, maxLength: 8 }), fc.constantFrom('{{.}}', '{{x}}', 'row ', '{{items}}'))
        .map(([path, leaf]) => path.map((n) => `{{#${n}}}`).join('') + leaf + [...path].reverse().map((n) => `{{/${n}}}`).join(''));
      const long = fc.dictionary(
        fc.constantFrom(...names),
        fc.oneof(fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 200 })), { minLength: 1, maxLength: 60 }), fc.string({ maxLength: 2000 }), fc.constant(true)),
        { minKeys: 1, maxKeys: 4 },
      );
      let stopped = 0;
      check(
        fc.property(nested, long, budget, (source, vars, limits) => {
          const out = renderOrLimit(compileTemplate(source), vars, new Set(), limits);
          if (out instanceof TemplateLimitError) {
            stopped++;
            expect([...names, '.']).toContain(out.variable);
          }
        }),
        { runs: 300 },
      );
      expect(stopped, 'no run reached a cap').toBeGreaterThan(0);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'names resolve to own data only: an inherited property is missing, never rendered',
    () => {
      check(
        fc.property(fc.constantFrom('constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 's.length.constructor', 'obj.constructor.name'), (name) => {
          const missing = new Set<string>();
          const out = renderTemplate(compileTemplate(`[{{${name}}}]`), { s: 'abc', obj: {} }, missing);
          expect(out).toBe('[]');
          expect([...missing]).toEqual([name]);
        }),
        { runs: 20 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

// ---------------------------------------------------------------------------------------------
// Conditional queries

const FIELDS = ['metadata.tier', 'metadata.n', 'metadata.user.plan', 'params.model', 'params.messages.0.role', 'params.temperature', 'url.pathname', 'metadata', 'tier', 'url.host', 'metadata.constructor', 'metadata.__proto__', 'params.toString', 'metadata.tags'];
const OPS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$not', '$regex', '$where', '$elemMatch'];

const scalar = fc.oneof(fc.constantFrom('pro', 'free', 'gpt-4o', 'user', '/v1/chat/completions', 7, 0, 0.5, true, false, null, ...EVIL_TEXTS), fc.string({ maxLength: 4 }), fc.integer({ min: -3, max: 10 }));
/** Patterns: any string, and shapes that stall a backtracking engine; `$regex` runs on RE2, so each answers at once or is refused. */
const pattern = anyPattern;
const opArg: fc.Arbitrary<unknown> = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 }), pattern);

const fieldCondition: fc.Arbitrary<unknown> = fc.letrec<{ cond: unknown }>((tie) => ({
  cond: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.dictionary(fc.constantFrom(...OPS), fc.oneof(opArg, tie('cond')), { minKeys: 1, maxKeys: 2 }),
    fc.jsonValue({ maxDepth: 2 }),
  ),
})).cond;

const query: fc.Arbitrary<unknown> = fc.letrec<{ q: unknown }>((tie) => ({
  q: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.dictionary(fc.constantFrom(...FIELDS), fieldCondition, { maxKeys: 3 }),
    fc.record({ $and: fc.array(tie('q'), { maxLength: 3 }) }),
    fc.record({ $or: fc.array(tie('q'), { maxLength: 3 }) }),
    fc.record({ $not: tie('q') }),
    fc.record({ $nor: tie('q') }),
    fc.jsonValue({ maxDepth: 2 }),
  ),
})).q;

const queryInput: fc.Arbitrary<QueryInput> = fc.record({
  metadata: fc.option(
    fc.record({ tier: scalar, n: fc.integer({ min: -3, max: 10 }), user: fc.option(fc.record({ plan: scalar }), { nil: undefined }), tags: fc.array(scalar, { maxLength: 3 }) }, { requiredKeys: [] }),
    { nil: undefined },
  ),
  params: fc.option(
    fc.record(
      {
        model: scalar,
        temperature: fc.double({ min: 0, max: 2, noNaN: true }),
        messages: fc.array(fc.record({ role: fc.constantFrom('user', 'system', 'assistant'), content: fc.string({ maxLength: 16 }) }), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    ),
    { nil: undefined },
  ),
  url: fc.record({ pathname: fc.constantFrom('/v1/chat/completions', '/v1/completions', '/v1/embeddings') }),
});

function compiled(q: unknown): Predicate | GatewayError {
  try {
    return compileQuery(q, 'config.strategy.conditions[0].query');
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
}

describe('conditional queries (src/plan/query.ts)', () => {
  it(
    'any JSON compiles to a predicate or is a 400 invalid_config naming a path under the query; a predicate never throws',
    () => {
      check(
        fc.property(query, fc.array(queryInput, { minLength: 1, maxLength: 4 }), (q, inputs) => {
          const p = compiled(q);
          if (p instanceof GatewayError) {
            expect(p.code).toBe('invalid_config');
            expect(p.status).toBe(400);
            expect(String(p.param)).toMatch(/^config\.strategy\.conditions\[0\]\.query/);
            return;
          }
          for (const i of inputs) expect(typeof p(i)).toBe('boolean');
        }),
        { runs: 1000 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    '$regex: any pattern compiles (then answers on any text) or is a 400 invalid_config naming the $regex path',
    () => {
      check(
        fc.property(fc.constantFrom(...FIELDS.filter((f) => /^(metadata|params)\.|^url\.pathname$/.test(f))), anyPattern, fc.array(queryInput, { minLength: 1, maxLength: 3 }), (field, p, inputs) => {
          const q = compiled({ [field]: { $regex: p } });
          if (q instanceof GatewayError) {
            expect(compiles(p)).toBe(false);
            expect(q.code).toBe('invalid_config');
            expect(q.status).toBe(400);
            expect(String(q.param)).toBe(`config.strategy.conditions[0].query.${field}.$regex`);
            expect(q.message).toContain('$regex');
            return;
          }
          expect(compiles(p)).toBe(true);
          for (const i of inputs) expect(typeof q(i)).toBe('boolean');
        }),
        { runs: 500 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'the operators keep their algebra: $not, $and, $or, $ne, $nin and implicit $eq agree with their definitions',
    () => {
      const valid = query.filter((q) => !(compiled(q) instanceof GatewayError));
      check(
        fc.property(valid, valid, fc.constantFrom(...FIELDS.filter((f) => /^(metadata|params)\.|^url\.pathname$/.test(f))), scalar, fc.array(scalar, { maxLength: 3 }), queryInput, (a, b, field, v, list, i) => {
          const run = (q: unknown) => (compileQuery(q, 'q') as Predicate)(i);
          expect(run({ $not: a })).toBe(!run(a));
          expect(run({ $and: [a, b] })).toBe(run(a) && run(b));
          expect(run({ $or: [a, b] })).toBe(run(a) || run(b));
          expect(run({ [field]: v })).toBe(run({ [field]: { $eq: v } }));
          expect(run({ [field]: { $ne: v } })).toBe(!run({ [field]: { $eq: v } }));
          expect(run({ [field]: { $nin: list } })).toBe(!run({ [field]: { $in: list } }));
          expect(run({ [field]: { $not: { $eq: v } } })).toBe(!run({ [field]: { $eq: v } }));
        }),
        { runs: 400 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'a field the request does not carry does not exist for a query, whatever its name (no inherited properties)',
    () => {
      check(
        fc.property(
          fc.constantFrom('metadata', 'params'),
          fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'constructor.name', '__proto__.constructor', 'absent'),
          queryInput,
          (root, name, i) => {
            const field = `${root}.${name}`;
            expect(compileQuery({ [field]: { $exists: false } }, 'q')(i)).toBe(true);
            expect(compileQuery({ [field]: { $exists: true } }, 'q')(i)).toBe(false);
            expect(compileQuery({ [field]: {} }, 'q')(i)).toBe(false);
          },
        ),
        { runs: 100 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
