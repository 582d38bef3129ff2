/**
 * Property tests of the proxied HTTP surface, against a real gateway on port 0 and a loopback fake
 * provider: request bodies (chat completions, completions, embeddings), the x-gateway-* headers,
 * inline configs (x-gateway-config) and saved ones. For each, values read off the zod schema are
 * classified by that schema, and the gateway must answer every one (never a 500, never a hang), must
 * refuse what the schema forbids with a 400 naming the place, and must not refuse with a schema error
 * what the schema accepts.
 *
 * Traffic stays on loopback: every target the generators build is the fake (custom_host), provider
 * fields that would build another host (regions, resources, endpoints) are never generated, and the
 * checks drawn for hooks and guardrails are those that make no outbound call.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { BODY_SCHEMAS, type BodyEndpoint } from '../../src/config/bodies.js';
import { CONFIG_HEADERS, REQUEST_HEADERS } from '../../src/config/headers.js';
import { loadPipelines, PipelineError } from '../../src/config/pipelines.js';
import { PROVIDER_FIELD_NAMES } from '../../src/config/provider-fields.js';
import { CacheSchema, ConfigSchema, RetrySchema, type Config } from '../../src/config/schema.js';
import { HookCheckSchema, InputGuardrailEntrySchema, OutputGuardrailEntrySchema } from '../../src/config/hook-schemas.js';
import { CHECKS } from '../../src/checks/registry.js';
import { MAX_JSON_DEPTH } from '../../src/util/json-depth.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';
import { checkAsync, check, PROPERTY_TIMEOUT_MS, sampleOf } from './_fuzz.js';
import { answered, asciiJson, headerSafe, headerText, refused } from './_http.js';
import { anyPattern, anyText, compiles, PATTERN_PARAM_OVERRIDES, schemaWithPatterns } from './_patterns.js';
import { nearMissesOf, valuesOf } from './_zod-arbitrary.js';

const PATHS: Record<BodyEndpoint, string> = { chat: '/v1/chat/completions', completions: '/v1/completions', embeddings: '/v1/embeddings' };
const AUTH = 'Bearer sk-fuzz-provider';

let fake: FakeOpenAI;
let gw: TestGateway;
let savedIds: string[] = [];

/** Headers that route to the fake as provider openai. */
const routed = (extra: Record<string, string> = {}): Record<string, string> =>
  gw.headers({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, authorization: AUTH, ...extra });

// ---------------------------------------------------------------------------------------------
// Arbitraries

/** Prompts and embedding inputs (a hand-written check in the schema, so drawn here): every shape, and some wrong ones. */
const tokenInput = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
  fc.array(fc.nat({ max: 50_000 }), { maxLength: 4 }),
  fc.array(fc.array(fc.nat({ max: 50_000 }), { maxLength: 3 }), { maxLength: 3 }),
  fc.constantFrom<unknown>(null, 3, [1, 'a'], [[1], 2], [-1], [1.5], [[]], ['']),
);

function bodyArbitrary(endpoint: BodyEndpoint): fc.Arbitrary<unknown> {
  const schema = BODY_SCHEMAS[endpoint] as unknown as z.ZodObject;
  const overrides = new Map<z.ZodType, fc.Arbitrary<unknown>>();
  const shape = schema.shape as Record<string, z.ZodType>;
  for (const k of ['prompt', 'input']) if (shape[k]) overrides.set(shape[k], tokenInput);
  // The fake serves the models it knows; any other model is its 404, not what is tested here.
  overrides.set(shape.model!, fc.constantFrom(endpoint === 'embeddings' ? 'text-embedding-3-small' : 'gpt-4o-mini', 'gpt-4o'));
  return valuesOf(schema, { overrides, maxDepth: 3 });
}

/**
 * Checks that run locally, with parameters drawn from each check's own schema; the pattern checks'
 * patterns and schemas are any (`_patterns.ts`): RE2 compiles them or the config is refused.
 * validUrls, webhook, log and jwt make outbound calls and stay out.
 */
const LOCAL_CHECKS = [
  'contains',
  'wordCount',
  'sentenceCount',
  'characterCount',
  'jsonKeys',
  'containsCode',
  'endsWith',
  'alluppercase',
  'alllowercase',
  'notNull',
  'modelWhitelist',
  'modelRules',
  'allowedRequestTypes',
  'requiredMetadataKeys',
  'addPrefix',
  'regexMatch',
  'regexReplace',
  'jsonSchema',
];
const paramsOf = (id: string) => CHECKS.get(`default.${id}`)!.params as z.ZodType;
const checkParams = (id: string) => valuesOf(paramsOf(id), { maxDepth: 2, overrides: PATTERN_PARAM_OVERRIDES }) as fc.Arbitrary<Record<string, unknown>>;
const hookCheck = fc.constantFrom(...LOCAL_CHECKS).chain((id) => fc.record({ id: fc.constantFrom(id, `default.${id}`), parameters: checkParams(id) }));
const guardrailEntry = fc.oneof(
  fc.constantFrom('no-such-guardrail', ''),
  fc.constantFrom(...LOCAL_CHECKS).chain((id) =>
    fc.record({ [`default.${id}`]: checkParams(id), deny: fc.boolean(), async: fc.boolean() }, { requiredKeys: [`default.${id}`] }),
  ),
);

const PROVIDER_FIELD_SET = new Set<string>([...PROVIDER_FIELD_NAMES, 'virtual_key']);

/** Every node of a config (the root and each target) reaches the fake, and only the fake. */
function toFake(node: unknown): unknown {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (!PROVIDER_FIELD_SET.has(k)) out[k] = k === 'targets' && Array.isArray(v) ? v.map(toFake) : v;
  return { ...out, provider: 'openai', custom_host: fake.baseUrl, api_key: 'sk-fuzz-provider' };
}

/** Configs drawn from the config schema, every target pointed at the fake: whole trees, and plain ones that mostly serve. */
const configArb = (): fc.Arbitrary<unknown> => fc.oneof(treeConfig(), plainConfig());

const plainConfig = (): fc.Arbitrary<unknown> =>
  fc
    .record(
      {
        retry: valuesOf(RetrySchema),
        cache: valuesOf(CacheSchema),
        request_timeout: fc.integer({ min: 1000, max: 60_000 }),
        override_params: fc.record({ temperature: fc.double({ min: 0, max: 2, noNaN: true }) }, { requiredKeys: [] }),
        before_request_hooks: fc.array(fc.record({ id: fc.constantFrom('h1', 'h2'), checks: fc.array(hookCheck, { maxLength: 2 }) }), { maxLength: 1 }),
      },
      { requiredKeys: [] },
    )
    .map(toFake);

const treeConfig = (): fc.Arbitrary<unknown> =>
  valuesOf(ConfigSchema, {
    maxDepth: 4,
    overrides: new Map<z.ZodType, fc.Arbitrary<unknown>>([
      [HookCheckSchema, hookCheck],
      [InputGuardrailEntrySchema, guardrailEntry],
      [OutputGuardrailEntrySchema, guardrailEntry],
    ]),
  }).map(toFake);

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello fuzz' }] };

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  // Saved configs: a seeded batch of valid ones, referenced by id in x-gateway-config.
  const saved = new Map<string, Config>();
  const valid = configArb().filter((c) => ConfigSchema.safeParse(c).success);
  sampleOf(valid, 24, 1).forEach((c, i) => saved.set(`fuzz-${i}`, ConfigSchema.parse(c)));
  // The gateway builds every saved config's plan at start and refuses to start on one that does not
  // build (a check's parameters that contradict each other, say): keep those that build.
  for (;;) {
    try {
      gw = await startGateway({ savedConfigs: saved });
      break;
    } catch (e) {
      const id = /saved config (fuzz-\d+)/.exec(String((e as Error).message))?.[1];
      if (!(e instanceof PipelineError) || id === undefined) throw e;
      saved.delete(id);
    }
  }
  savedIds = [...saved.keys()];
  expect(savedIds.length).toBeGreaterThan(5);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe('request bodies', () => {
  for (const endpoint of ['chat', 'completions', 'embeddings'] as const) {
    const schema = BODY_SCHEMAS[endpoint] as z.ZodType;
    const url = () => `${gw.url}${PATHS[endpoint]}`;

    it(
      `${endpoint}: a body the schema accepts is answered and never refused as a bad body`,
      async () => {
        const valid = bodyArbitrary(endpoint).filter((b) => schema.safeParse(b).success);
        let served = 0;
        await checkAsync(
          fc.asyncProperty(valid, async (body) => {
            const r = await post(url(), routed(), body);
            answered(r, body);
            expect(r.json?.error?.code, r.text.slice(0, 500)).not.toBe('invalid_request_body');
            if (r.status === 200) served++;
          }),
          { runs: 80 },
        );
        expect(served, 'no valid body reached the fake and back').toBeGreaterThan(0);
      },
      PROPERTY_TIMEOUT_MS,
    );

    it(
      `${endpoint}: a body with one field broken is a 400 invalid_request_body naming that field`,
      async () => {
        const valid = bodyArbitrary(endpoint).filter((b) => schema.safeParse(b).success);
        const broken = nearMissesOf(schema, valid).filter((m) => !schema.safeParse(m.value).success);
        await checkAsync(
          fc.asyncProperty(broken, async ({ value, path }) => {
            const r = await post(url(), routed(), JSON.stringify(value));
            answered(r, value);
            refused(r, value, 'invalid_request_body', path);
          }),
          { runs: 120 },
        );
      },
      PROPERTY_TIMEOUT_MS,
    );
  }

  it(
    'any JSON, and any bytes, as a body: an answer, never a 500',
    async () => {
      const raw = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.string({ maxLength: 40 }));
      await checkAsync(
        fc.asyncProperty(fc.constantFrom(...Object.values(PATHS)), raw, async (path, body) => {
          const r = await post(`${gw.url}${path}`, routed(), typeof body === 'string' ? body : JSON.stringify(body));
          answered(r, body);
          if (r.status === 400) expect(['invalid_json', 'invalid_request_body']).toContain(r.json.error.code);
        }),
        { runs: 120 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    `JSON nested deeper than ${MAX_JSON_DEPTH} levels (up to 6,000) is a 400 json_too_deep; up to it, never that`,
    async () => {
      // Around the cap, and far past it (5,000 levels overflowed the stack of the code after the parse).
      const depth = fc.oneof(fc.integer({ min: 1, max: MAX_JSON_DEPTH + 12 }), fc.integer({ min: MAX_JSON_DEPTH - 3, max: MAX_JSON_DEPTH + 3 }), fc.integer({ min: 5000, max: 6000 }));
      const nested = fc.oneof(
        depth.map((n) => ({ depth: n, text: '['.repeat(n) + ']'.repeat(n) })),
        depth.map((n) => ({ depth: n, text: `{"a":${'{"a":'.repeat(n - 1)}1${'}'.repeat(n)}` })),
        // inside a chat body: the object, `messages`, a message and `content` add three levels
        depth.map((n) => ({ depth: n + 3, text: `{"model":"gpt-4o","messages":[{"role":"user","content":${'['.repeat(n)}${']'.repeat(n)}}]}` })),
      );
      await checkAsync(
        fc.asyncProperty(fc.constantFrom(...Object.values(PATHS)), nested, async (path, { depth: d, text }) => {
          const r = await post(`${gw.url}${path}`, routed(), text);
          answered(r, { depth: d });
          if (d > MAX_JSON_DEPTH) refused(r, { depth: d }, 'json_too_deep');
          else expect(r.json?.error?.code, `${d} → ${r.text.slice(0, 300)}`).not.toBe('json_too_deep');
        }),
        { runs: 60 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('x-gateway-* headers', () => {
  /** Each header the gateway reads, its schema, and values to draw for it. */
  const SAFE_HOSTS = () => fc.constantFrom(fake.baseUrl, 'http://127.0.0.1:9/v1', 'not a url', 'ftp://127.0.0.1/', 'http://', '/v1', '');
  const headerCases = (): [string, z.ZodType | undefined, fc.Arbitrary<string>][] => [
    ...CONFIG_HEADERS.map(([header, , schema]): [string, z.ZodType, fc.Arbitrary<string>] => {
      if (header === 'x-gateway-custom-host') return [header, schema, SAFE_HOSTS()];
      if (header === 'x-gateway-provider') return [header, schema, fc.oneof(fc.constantFrom('openai', 'OpenAI', '@openai', 'groq', 'anthropic', 'azure-openai', 'bedrock', 'vertex-ai', ' ', ''), headerText(8))];
      return [header, schema, fc.oneof((valuesOf(schema, { maxString: 16 }) as fc.Arbitrary<string>).filter(headerSafe), headerText())];
    }),
    [REQUEST_HEADERS.traceId, undefined, fc.oneof(headerText(40), fc.string({ minLength: 120, maxLength: 140, unit: fc.constantFrom('a', 'b') }))],
    [REQUEST_HEADERS.metadata, undefined, fc.oneof(fc.jsonValue({ maxDepth: 2 }).map(asciiJson), headerText())],
    [REQUEST_HEADERS.cacheForceRefresh, undefined, fc.constantFrom('true', 'false', 'TRUE', '1', '', 'yes')],
    [REQUEST_HEADERS.cacheNamespace, undefined, fc.oneof(headerText(), fc.constant('n'.repeat(300)))],
  ];

  it(
    'one header at a time: its schema decides; a value it refuses is a 400 naming the header, one it accepts is not',
    async () => {
      const cases = headerCases();
      const arb = fc.integer({ min: 0, max: cases.length - 1 }).chain((i) => cases[i]![2].map((v) => [cases[i]![0], cases[i]![1], v] as const));
      await checkAsync(
        fc.asyncProperty(arb, async ([header, schema, value]) => {
          const r = await post(`${gw.url}${PATHS.chat}`, routed({ [header]: value }), CHAT);
          answered(r, { [header]: value });
          const namesHeader = r.status === 400 && r.json.error.code === 'invalid_header' && r.json.error.param === header;
          if (schema === undefined) return;
          const ok = (schema as z.ZodType).safeParse(value).success;
          if (!ok) refused(r, { [header]: value }, 'invalid_header');
          if (!ok) expect(r.json.error.param).toBe(header);
          else expect(namesHeader, `${header}: ${JSON.stringify(value)} → ${r.text.slice(0, 300)}`).toBe(false);
        }),
        { runs: 200 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'request settings headers: out of their documented bounds is a 400 naming the header',
    async () => {
      const bad = fc.oneof(
        fc.constant([REQUEST_HEADERS.traceId, 'a'.repeat(129)] as const),
        fc.constant([REQUEST_HEADERS.traceId, 'has space'] as const),
        fc.constant([REQUEST_HEADERS.metadata, '[1,2]'] as const),
        fc.constant([REQUEST_HEADERS.metadata, '{"k":{"nested":1}}'] as const),
        fc.constant([REQUEST_HEADERS.metadata, JSON.stringify({ k: 'v'.repeat(1025) })] as const),
        fc.constant([REQUEST_HEADERS.cacheForceRefresh, 'yes'] as const),
        fc.constant([REQUEST_HEADERS.cacheNamespace, 'n'.repeat(257)] as const),
        fc.constant(['x-gateway-request-timeout', '0'] as const),
        fc.constant(['x-gateway-request-timeout', '86400001'] as const),
        fc.constant(['x-gateway-forward-headers', '[1]'] as const),
      );
      await checkAsync(
        fc.asyncProperty(bad, async ([header, value]) => {
          const r = await post(`${gw.url}${PATHS.chat}`, routed({ [header]: value }), CHAT);
          refused(r, { [header]: value }, 'invalid_header');
          expect(r.json.error.param).toBe(header);
        }),
        { runs: 30 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'several headers at once, any values: an answer, never a 500',
    async () => {
      const cases = headerCases();
      const some = fc.uniqueArray(fc.integer({ min: 0, max: cases.length - 1 }), { minLength: 1, maxLength: 5 }).chain((is) =>
        fc.tuple(...is.map((i) => cases[i]![2].map((v) => [cases[i]![0], v] as const))),
      );
      await checkAsync(
        fc.asyncProperty(some, async (pairs) => {
          const extra = Object.fromEntries(pairs);
          const r = await post(`${gw.url}${PATHS.chat}`, routed(extra), CHAT);
          answered(r, extra);
        }),
        { runs: 150 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('configs', () => {
  it(
    'an inline config the schema accepts is answered; one it refuses is a 400 invalid_config',
    async () => {
      let served = 0;
      await checkAsync(
        fc.asyncProperty(configArb(), fc.boolean(), async (config, stream) => {
          const r = await post(`${gw.url}${PATHS.chat}`, gw.headers({ 'x-gateway-config': asciiJson(config) }), { ...CHAT, stream });
          answered(r, config);
          if (!ConfigSchema.safeParse(config).success) refused(r, config, 'invalid_config');
          else expect(r.json?.error?.code, r.text.slice(0, 500)).not.toBe('invalid_header');
          if (r.status === 200) served++;
        }),
        { runs: 150 },
      );
      expect(served, 'no config reached the fake and back').toBeGreaterThan(0);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'a pattern check with any pattern, on texts that stall a backtracking engine: it compiles and answers, or the config is a 400 invalid_config naming its path',
    async () => {
      const patternCheck = fc.oneof(
        fc.tuple(fc.constantFrom('regexMatch', 'regexReplace'), anyPattern).map(([id, rule]) => ({ id, params: { rule } as Record<string, unknown>, field: 'rule', ok: compiles(rule) })),
        schemaWithPatterns.map((schema) => ({ id: 'jsonSchema', params: { schema } as Record<string, unknown>, field: 'schema', ok: undefined as boolean | undefined })),
      );
      const seen = { refused: 0, ran: 0 };
      await checkAsync(
        fc.asyncProperty(patternCheck, fc.constantFrom('input_guardrails', 'output_guardrails'), anyText, async ({ id, params, field, ok }, list, text) => {
          const config = toFake({ [list]: [{ [`default.${id}`]: params, deny: true }] });
          const r = await post(`${gw.url}${PATHS.chat}`, gw.headers({ 'x-gateway-config': asciiJson(config) }), { ...CHAT, messages: [{ role: 'user', content: text }] });
          answered(r, { config, text: text.slice(0, 60) });
          const why = `${JSON.stringify(params)} → ${r.status} ${r.text.slice(0, 400)}`;
          const refusedHere = r.status === 400 && r.json.error.code === 'invalid_config';
          if (ok !== undefined) expect(refusedHere, why).toBe(!ok);
          if (refusedHere) refused(r, config, 'invalid_config', ['config', list, 0, `default.${id}`, field]);
          seen[refusedHere ? 'refused' : 'ran']++;
        }),
        { runs: 120 },
      );
      expect(seen.refused, 'no pattern was refused').toBeGreaterThan(0);
      expect(seen.ran, 'no pattern compiled and ran').toBeGreaterThan(0);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    `an x-gateway-config nested deeper than ${MAX_JSON_DEPTH} levels (up to 5,000) is a 400 json_too_deep naming the header`,
    async () => {
      const depth = fc.oneof(fc.integer({ min: MAX_JSON_DEPTH - 2, max: MAX_JSON_DEPTH + 2 }), fc.integer({ min: 1000, max: 5000 }));
      await checkAsync(
        fc.asyncProperty(depth, async (n) => {
          const header = `{"metadata":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
          const r = await post(`${gw.url}${PATHS.chat}`, gw.headers({ 'x-gateway-config': header }), CHAT);
          answered(r, { depth: n });
          if (n > MAX_JSON_DEPTH) {
            refused(r, { depth: n }, 'json_too_deep');
            expect(r.json.error.param).toBe('x-gateway-config');
          } else expect(r.json?.error?.code).not.toBe('json_too_deep');
        }),
        { runs: 20 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'a config with one field broken is a 400 invalid_config naming that field',
    async () => {
      const valid = configArb().filter((c) => ConfigSchema.safeParse(c).success);
      // (The root itself replaced is no config: `null` or `17` in the header is a saved config's id.)
      const broken = nearMissesOf(ConfigSchema, valid).filter((m) => m.path.length > 0 && !ConfigSchema.safeParse(m.value).success);
      await checkAsync(
        fc.asyncProperty(broken, async ({ value, path }) => {
          const r = await post(`${gw.url}${PATHS.chat}`, gw.headers({ 'x-gateway-config': asciiJson(value) }), CHAT);
          answered(r, value);
          refused(r, value, 'invalid_config', ['config', ...path]);
        }),
        { runs: 150 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'a saved config, with any loose headers beside it: an answer, never a 500',
    async () => {
      const loose = fc.dictionary(
        fc.constantFrom('x-gateway-provider', 'x-gateway-request-timeout', 'x-gateway-forward-headers', 'x-gateway-metadata', 'x-gateway-trace-id', 'x-gateway-cache-namespace'),
        headerText(),
        { maxKeys: 3 },
      );
      await checkAsync(
        fc.asyncProperty(fc.constantFrom(...savedIds, 'no-such-config', ' fuzz-0 ', 'fuzz 0', '../etc'), loose, fc.boolean(), async (id, extra, stream) => {
          const r = await post(`${gw.url}${PATHS.chat}`, gw.headers({ 'x-gateway-config': id, ...extra }), { ...CHAT, stream });
          answered(r, { id, extra });
        }),
        { runs: 120 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'saved config files: a directory of them loads, or stops the start with a PipelineError naming the file',
    () => {
      const anyConfig = fc.oneof(configArb(), nearMissesOf(ConfigSchema, configArb()).map((m) => m.value), fc.jsonValue({ maxDepth: 3 }));
      const files = fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z0-9_.-]{1,8}$/), anyConfig, fc.boolean()), { maxLength: 4, selector: ([name]) => name });
      check(
        fc.property(files, (entries) => {
          const dir = mkdtempSync(join(tmpdir(), 'sluice-fuzz-pipelines-'));
          try {
            // A mangled file is cut one character short: not JSON any more.
            for (const [name, value, mangle] of entries) writeFileSync(join(dir, `${name}.json`), mangle ? JSON.stringify(value).slice(0, -1) : JSON.stringify(value));
            let loaded: Map<string, Config>;
            try {
              loaded = loadPipelines(dir, true);
            } catch (e) {
              expect(e).toBeInstanceOf(PipelineError);
              expect((e as Error).message).toContain(dir);
              expect(entries.some(([, value, mangle]) => mangle || !ConfigSchema.safeParse(value).success)).toBe(true);
              return;
            }
            for (const [name, value] of entries) expect(ConfigSchema.safeParse(value).success && loaded.has(name)).toBe(true);
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        }),
        { runs: 150 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
