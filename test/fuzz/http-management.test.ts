/**
 * Property tests of the management APIs (api-keys, virtual-keys, usage-limit policies, guardrails,
 * prompts) and their queries (lists, gets, logs), against a real gateway on port 0. Bodies and
 * queries are read off each route's zod schema and classified by it: a value the schema refuses is a
 * 400 naming the place; one it accepts is never refused as a bad body or query; nothing is a 500 or
 * goes unanswered. No request here is proxied: what is stored is never used to reach anything.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { CHECKS } from '../../src/checks/registry.js';
import { PromptBodySchema } from '../../src/config/prompts.js';
import { UsageLimitBodySchema } from '../../src/config/usage-limits.js';
import { ApiKeyBodySchema } from '../../src/management/api-keys.js';
import { GuardrailBodySchema } from '../../src/management/guardrails.js';
import { LogsQuerySchema } from '../../src/management/logs.js';
import { PolicyListQuerySchema } from '../../src/management/policies.js';
import { GetQuerySchema, ListQuerySchema } from '../../src/management/resources.js';
import { MAX_JSON_DEPTH } from '../../src/util/json-depth.js';
import { VirtualKeyBodySchema } from '../../src/management/virtual-keys.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { callApi } from '../helpers/http.js';
import { checkAsync, PROPERTY_TIMEOUT_MS } from './_fuzz.js';
import { answered, refused } from './_http.js';
import { anyPattern, compiles, PATTERN_PARAM_OVERRIDES } from './_patterns.js';
import { nearMissesOf, valuesOf } from './_zod-arbitrary.js';

const WS_KEY = 'sk-fuzz-workspace-key-0123456789';
const ORG_ADMIN = 'sk-fuzz-org-admin-key-0123456789';
const BOOTSTRAP = `
api_keys:
  - { key: ${WS_KEY}, name: fuzz-ws, workspace_id: ws-fuzz, organisation_id: org-fuzz }
  - { key: ${ORG_ADMIN}, name: fuzz-admin, organisation_id: org-fuzz, scopes: [admin] }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ bootstrapYaml: BOOTSTRAP, masterKey: 'ab'.repeat(32) });
});
afterAll(async () => {
  await gw?.close();
});

type Shape = Record<string, z.ZodType>;
const shapeOf = (s: z.ZodType): Shape => (s as unknown as z.ZodObject).shape as Shape;
/** The element schema of an array field, under optional/default wrappers. */
function elementOf(s: z.ZodType): z.ZodType {
  let cur = s as unknown as { _zod: { def: { type: string; innerType?: unknown; element?: unknown } } };
  while (cur._zod.def.type !== 'array') cur = cur._zod.def.innerType as typeof cur;
  return cur._zod.def.element as z.ZodType;
}

/** Scope fields drawn mostly as the caller's own, sometimes another's (a 403, not a 400). */
const scopeOverrides = (shape: Shape): [z.ZodType, fc.Arbitrary<unknown>][] =>
  [
    ['workspace_id', fc.constantFrom('ws-fuzz', 'ws-fuzz', 'ws-other')],
    ['organisation_id', fc.constantFrom('org-fuzz', 'org-fuzz', 'org-other')],
  ].flatMap(([k, arb]) => (shape[k as string] ? [[shape[k as string]!, arb as fc.Arbitrary<unknown>] as [z.ZodType, fc.Arbitrary<unknown>]] : []));

/** Local checks (no outbound call) with parameters from their own schemas; the pattern checks with any pattern or schema (`_patterns.ts`). */
const LOCAL_CHECKS = ['contains', 'wordCount', 'characterCount', 'jsonKeys', 'endsWith', 'alluppercase', 'notNull', 'modelWhitelist', 'requiredMetadataKeys', 'regexMatch', 'regexReplace', 'jsonSchema'];
const paramsOf = (id: string) => CHECKS.get(`default.${id}`)!.params as z.ZodType;
const storedCheck = fc
  .constantFrom(...LOCAL_CHECKS, 'no.such.check')
  .chain((id) => fc.record({ id: fc.constant(id), parameters: CHECKS.has(`default.${id}`) ? (valuesOf(paramsOf(id), { maxDepth: 2, overrides: PATTERN_PARAM_OVERRIDES }) as fc.Arbitrary<unknown>) : fc.constant({}) }));

/** Template text: plain words, names, and sections, well-formed or not. */
const templateText = fc
  .array(fc.constantFrom('Hello ', '{{name}}', '{{#items}}', '{{/items}}', '{{^x}}', '{{/x}}', '{{', '}}', '{{> p}}', 'text', '\n'), { maxLength: 8 })
  .map((p) => p.join(''));

/** Any virtual key body: every provider field drawn, so mostly refused by the provider's own rules. */
function vkAny(vk: Shape): fc.Arbitrary<unknown> {
  return valuesOf(VirtualKeyBodySchema, {
    overrides: new Map([
      ...scopeOverrides(vk),
      [vk.provider!, fc.constantFrom('openai', 'anthropic', 'bedrock', 'azure-openai', 'vertex-ai', 'no-such-provider')],
      [vk.custom_host!, fc.constantFrom('http://127.0.0.1:9/v1', 'https://127.0.0.1:9/', 'http://10.0.0.1/', 'not a url')],
      [vk.id!, fc.stringMatching(/^[a-z0-9_.-]{1,12}$/)],
    ]),
  });
}

interface Resource {
  name: string;
  path: string;
  key: string;
  schema: z.ZodType;
  body: fc.Arbitrary<unknown>;
  /** The only answers a body the schema accepts may get (besides the 403 for another scope). */
  accepted: number[];
}

function resources(): Resource[] {
  const ak = shapeOf(ApiKeyBodySchema);
  const vk = shapeOf(VirtualKeyBodySchema);
  const pol = shapeOf(UsageLimitBodySchema);
  const gr = shapeOf(GuardrailBodySchema);
  const pr = shapeOf(PromptBodySchema);
  return [
    {
      name: 'api-keys',
      path: '/v1/api-keys',
      key: ORG_ADMIN,
      schema: ApiKeyBodySchema,
      body: valuesOf(ApiKeyBodySchema, { overrides: new Map(scopeOverrides(ak)) }),
      accepted: [201],
    },
    {
      name: 'virtual-keys',
      path: '/v1/virtual-keys',
      key: WS_KEY,
      schema: VirtualKeyBodySchema,
      body: fc.oneof(
        // what an openai key uses, which mostly stores
        fc.record(
          { provider: fc.constantFrom('openai', 'OpenAI'), api_key: fc.string({ maxLength: 12 }), custom_host: fc.constantFrom('http://127.0.0.1:9/v1', 'not a url'), id: fc.stringMatching(/^[a-z0-9_.-]{1,12}$/), workspace_id: fc.constantFrom('ws-fuzz', 'ws-other') },
          { requiredKeys: ['provider', 'api_key'] },
        ),
        vkAny(vk),
      ),
      // a provider's own rules (fields it does not use, the host guard) come after the schema
      accepted: [201, 400, 409],
    },
    {
      name: 'policies',
      path: '/v1/policies/usage-limits',
      key: WS_KEY,
      schema: UsageLimitBodySchema,
      body: valuesOf(UsageLimitBodySchema, {
        overrides: new Map([
          ...scopeOverrides(pol),
          [elementOf(pol.conditions!), fc.record({ key: fc.constantFrom('api_key', 'workspace_id', 'provider', 'model', 'metadata.user', 'metadata.a b', 'nope'), value: fc.string({ minLength: 1, maxLength: 8 }) })],
          [elementOf(pol.group_by!), fc.record({ key: fc.constantFrom('api_key', 'workspace_id', 'provider', 'model', 'metadata._user', 'nope') })],
        ]),
      }),
      accepted: [201],
    },
    {
      name: 'guardrails',
      path: '/v1/guardrails',
      key: WS_KEY,
      schema: GuardrailBodySchema,
      body: valuesOf(GuardrailBodySchema, { overrides: new Map([...scopeOverrides(gr), [elementOf(gr.checks!), storedCheck]]) }),
      // each check's own parameters are checked after the body's shape
      accepted: [201, 400],
    },
    {
      name: 'prompts',
      path: '/v1/prompts',
      key: WS_KEY,
      schema: PromptBodySchema,
      body: valuesOf(PromptBodySchema, {
        overrides: new Map<z.ZodType, fc.Arbitrary<unknown>>([
          ...scopeOverrides(pr),
          [elementOf(pr.messages!), fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: templateText })],
          [pr.prompt!, templateText],
          [pr.model!, fc.constantFrom('gpt-4o-mini', 'gpt-4o')],
          [pr.parameters!, fc.record({ temperature: fc.double({ min: -1, max: 3, noNaN: true }), max_tokens: fc.integer({ min: -1, max: 100 }) }, { requiredKeys: [] })],
        ]),
      }),
      accepted: [201],
    },
  ];
}

describe('management bodies', () => {
  for (const r of resources()) {
    it(
      `${r.name}: a body the schema accepts is stored (or refused for its scope), never a bad-body 400 naming a schema field`,
      async () => {
        const valid = r.body.filter((b) => r.schema.safeParse(b).success);
        let stored = 0;
        await checkAsync(
          fc.asyncProperty(valid, async (body) => {
            const a = await callApi(gw.url, 'POST', r.path, r.key, body);
            answered(a, body);
            const other = JSON.stringify(body).includes('-other"');
            expect([...r.accepted, ...(other ? [403] : [])], `${JSON.stringify(body)} → ${a.status} ${a.text.slice(0, 400)}`).toContain(a.status);
            if (a.status === 201) stored++;
          }),
          { runs: 60 },
        );
        expect(stored, 'no valid body was stored').toBeGreaterThan(0);
      },
      PROPERTY_TIMEOUT_MS,
    );

    it(
      `${r.name}: a body with one field broken is a 400 invalid_request_body naming that field (POST and PUT)`,
      async () => {
        const valid = r.body.filter((b) => r.schema.safeParse(b).success);
        const broken = nearMissesOf(r.schema, valid).filter((m) => !r.schema.safeParse(m.value).success);
        await checkAsync(
          fc.asyncProperty(broken, fc.boolean(), async ({ value, path }, put) => {
            // PUT on an id that does not exist: the body is still checked first... or the id is; either way never a 500
            const a = put ? await callApi(gw.url, 'PUT', `${r.path}/fuzz-absent`, r.key, JSON.stringify(value)) : await callApi(gw.url, 'POST', r.path, r.key, JSON.stringify(value));
            answered(a, value);
            if (put) {
              expect([400, 404, 405], a.text.slice(0, 300)).toContain(a.status);
              if (a.status === 400) refused(a, value, 'invalid_request_body', path);
            } else refused(a, value, 'invalid_request_body', path);
          }),
          { runs: 80 },
        );
      },
      PROPERTY_TIMEOUT_MS,
    );
  }
});

describe('stored guardrails with pattern checks', () => {
  it(
    'any pattern: the guardrail is stored when RE2 compiles it, else a 400 invalid_config naming the check\'s parameters',
    async () => {
      const seen = { stored: 0, refused: 0 };
      await checkAsync(
        fc.asyncProperty(fc.constantFrom('default.regexMatch', 'regexReplace'), anyPattern, async (id, rule) => {
          const body = { name: 'pattern', checks: [{ id, parameters: { rule } }], actions: { onFail: 'block' } };
          const a = await callApi(gw.url, 'POST', '/v1/guardrails', WS_KEY, body);
          answered(a, body);
          if (compiles(rule)) expect(a.status, `${JSON.stringify(rule)} → ${a.text.slice(0, 300)}`).toBe(201);
          else {
            refused(a, body, 'invalid_config', ['checks', 0, 'parameters', 'rule']);
            expect(a.json.error.param).toBe('checks[0].parameters');
          }
          seen[a.status === 201 ? 'stored' : 'refused']++;
        }),
        { runs: 80 },
      );
      expect(seen.stored).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('management bodies nested past the JSON depth cap', () => {
  it(
    `a body nested deeper than ${MAX_JSON_DEPTH} levels (up to 6,000) is a 400 json_too_deep on every resource`,
    async () => {
      const depth = fc.oneof(fc.integer({ min: MAX_JSON_DEPTH + 1, max: MAX_JSON_DEPTH + 4 }), fc.integer({ min: 5000, max: 6000 }));
      await checkAsync(
        fc.asyncProperty(fc.constantFrom(...resources()), depth, fc.boolean(), async (r, n, put) => {
          const body = `{"name":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
          // (api keys are never replaced: PUT there is a 405 whatever the body)
          const replace = put && r.name !== 'api-keys';
          const a = await callApi(gw.url, replace ? 'PUT' : 'POST', replace ? `${r.path}/fuzz-absent` : r.path, r.key, body);
          answered(a, { resource: r.name, depth: n });
          refused(a, { resource: r.name, depth: n }, 'json_too_deep');
        }),
        { runs: 40 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('management queries', () => {
  /** Query parameters: each field's values (strings, as a URL carries them), and unknown or repeated ones. */
  const queryArb = (schema: z.ZodType, extra: fc.Arbitrary<[string, string]>[] = []): fc.Arbitrary<[string, string][]> => {
    const shape = shapeOf(schema);
    const pairs = Object.keys(shape).map((k) =>
      fc.tuple(fc.constant(k), fc.oneof(valuesOf(shape[k]!, { maxString: 10 }).map(String), fc.constantFrom('', '-1', '101', '1e3', '2025-05-01', '2025-05-01T12:00:00Z', 'ws-other', '5xx', 'x'.repeat(129)))),
    );
    return fc.array(fc.oneof(...pairs, ...extra, fc.tuple(fc.constantFrom('nope', 'PAGE_SIZE', '__proto__', 'constructor'), fc.constant('1'))), { maxLength: 4 });
  };
  /** The parsed query as express's simple parser gives it: a repeated name is an array. */
  const asQuery = (pairs: [string, string][]): Record<string, unknown> => {
    const q: Record<string, unknown> = {};
    // defineProperty: `__proto__` is a name like any other in a URL
    for (const [k, v] of pairs) Object.defineProperty(q, k, { value: Object.hasOwn(q, k) ? [...[q[k]].flat(), v] : v, enumerable: true, writable: true, configurable: true });
    return q;
  };

  const cases: { name: string; path: string; key: string; schema: z.ZodType; pairs: fc.Arbitrary<[string, string][]> }[] = [
    { name: 'guardrails list', path: '/v1/guardrails', key: WS_KEY, schema: ListQuerySchema, pairs: queryArb(ListQuerySchema) },
    { name: 'prompts list', path: '/v1/prompts', key: WS_KEY, schema: ListQuerySchema, pairs: queryArb(ListQuerySchema) },
    { name: 'virtual-keys list', path: '/v1/virtual-keys', key: WS_KEY, schema: ListQuerySchema, pairs: queryArb(ListQuerySchema) },
    { name: 'api-keys list', path: '/v1/api-keys', key: ORG_ADMIN, schema: ListQuerySchema, pairs: queryArb(ListQuerySchema) },
    { name: 'policies list', path: '/v1/policies/usage-limits', key: WS_KEY, schema: PolicyListQuerySchema, pairs: queryArb(PolicyListQuerySchema) },
    { name: 'prompt get', path: '/v1/prompts/fuzz-absent', key: WS_KEY, schema: GetQuerySchema, pairs: queryArb(GetQuerySchema) },
  ];

  for (const c of cases) {
    it(
      `${c.name}: the query schema decides; refused parameters are a 400 invalid_query_parameter, accepted ones answer`,
      async () => {
        await checkAsync(
          fc.asyncProperty(c.pairs, async (pairs) => {
            const a = await callApi(gw.url, 'GET', `${c.path}?${new URLSearchParams(pairs)}`, c.key);
            answered(a, pairs);
            const ok = c.schema.safeParse(asQuery(pairs)).success;
            if (!ok) refused(a, pairs, 'invalid_query_parameter');
            // a refused query names a parameter it was sent (an unknown one included)
            if (!ok) expect(pairs.map(([k]) => k), a.text.slice(0, 300)).toContain(a.json.error.param);
            else expect([200, 403, 404], `${JSON.stringify(pairs)} → ${a.status} ${a.text.slice(0, 300)}`).toContain(a.status);
          }),
          { runs: 100 },
        );
      },
      PROPERTY_TIMEOUT_MS,
    );
  }

  it(
    'logs: filters, metadata.<key> filters and pages answer or are a 400 naming the parameter',
    async () => {
      const metadata = fc.tuple(fc.oneof(fc.constantFrom('metadata.user', 'metadata.', 'metadata.a.b'), fc.string({ maxLength: 130 }).map((s) => `metadata.${s}`)), fc.string({ maxLength: 20 }));
      const pairs = queryArb(LogsQuerySchema, [metadata]);
      await checkAsync(
        fc.asyncProperty(pairs, async (p) => {
          const a = await callApi(gw.url, 'GET', `/v1/logs?${new URLSearchParams(p)}`, WS_KEY);
          answered(a, p);
          if (a.status === 400) expect(a.json.error.code).toBe('invalid_query_parameter');
          const plain = p.filter(([k]) => !k.startsWith('metadata.'));
          if (!LogsQuerySchema.safeParse(asQuery(plain)).success) refused(a, p, 'invalid_query_parameter');
          else if (p.every(([k, v]) => !k.startsWith('metadata.') || (k.length > 9 && k.length <= 137 && v.length <= 1024)) && new Set(p.map(([k]) => k)).size === p.length) {
            expect([200, 403], `${JSON.stringify(p)} → ${a.status} ${a.text.slice(0, 300)}`).toContain(a.status);
          }
        }),
        { runs: 150 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
