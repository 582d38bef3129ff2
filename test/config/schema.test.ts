import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ConfigSchema,
  REQUIRED_KEY_SETS,
  parseConfig,
  satisfiesRequiredKeySet,
  type Config,
} from '../../src/config/schema.js';
import { GatewayError } from '../../src/errors/gateway-error.js';

type Path = (string | number)[];

function issues(input: unknown): { path: Path; message: string; code: string }[] {
  const r = ConfigSchema.safeParse(input);
  if (r.success) return [];
  return r.error.issues.map((i) => ({
    path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
    message: i.message,
    code: i.code,
  }));
}

const paths = (input: unknown): Path[] => issues(input).map((i) => i.path);

function expectValid(input: unknown): Config {
  const r = ConfigSchema.safeParse(input);
  if (!r.success) throw new Error(`expected valid, got ${JSON.stringify(r.error.issues)}`);
  return r.data;
}

/** A minimal valid leaf target. */
const leaf = (n = 'a') => ({ provider: 'openai', api_key: `sk-${n}` });

// The smallest valid config for each required-key set, in their order.
const KEY_SET_EXAMPLES: Record<string, unknown>[] = [
  { provider: 'openai', api_key: 'sk-1' },
  { provider: 'ollama', custom_host: 'http://localhost:11434/v1' },
  { virtual_key: 'vk-1' },
  { strategy: { mode: 'fallback' }, targets: [leaf('a'), { virtual_key: 'vk-b' }] },
  { cache: { mode: 'simple' } },
  { retry: { attempts: 3 } },
  { prompt_id: 'pp-1' },
  { forward_headers: ['x-tenant'] },
  { request_timeout: 10_000 },
  { provider: 'cloud-b', cloud_b_access_key_id: 'AKIA', cloud_b_secret_access_key: 'secret' },
  { provider: 'cloud-c', cloud_c_region: 'us-central1', cloud_c_service_account_json: { type: 'service_account' } },
  { provider: 'cloud-c', cloud_c_region: 'us-central1', cloud_c_project_id: 'proj' },
  {
    provider: 'cloud-a',
    cloud_a_deployment_name: 'gpt',
    cloud_a_deployment_type: 'serverless',
    cloud_a_region: 'eastus',
    cloud_a_api_version: '2024-06-01',
  },
  { provider: 'cloud-a', cloud_a_endpoint_name: 'ep', cloud_a_deployment_type: 'managed' },
  { after_request_hooks: [{ id: 'after-1' }] },
  { before_request_hooks: [{ id: 'before-1' }] },
  { input_guardrails: ['pg-input'] },
  { output_guardrails: ['pg-output'] },
];

describe('required key sets', () => {
  it('exports exactly the 18 required-key sets, in order', () => {
    expect(REQUIRED_KEY_SETS).toHaveLength(18);
    expect(REQUIRED_KEY_SETS[0]).toEqual(['provider', 'api_key']);
    expect(REQUIRED_KEY_SETS[3]).toEqual(['strategy', 'targets']);
    expect(REQUIRED_KEY_SETS[12]).toEqual([
      'provider',
      'cloud_a_deployment_name',
      'cloud_a_deployment_type',
      'cloud_a_region',
      'cloud_a_api_version',
    ]);
    expect(REQUIRED_KEY_SETS[17]).toEqual(['output_guardrails']);
  });

  it.each(KEY_SET_EXAMPLES.map((ex, i) => [i + 1, ex] as const))('set %i alone is accepted', (n, example) => {
    // The example holds exactly the keys of its set, so it tests that set and no other.
    expect(Object.keys(example).sort()).toEqual([...REQUIRED_KEY_SETS[n - 1]].sort());
    expect(satisfiesRequiredKeySet(example)).toBe(true);
    expect(expectValid(example)).toEqual(example);
  });

  const dropOne = KEY_SET_EXAMPLES.flatMap((ex, i) =>
    Object.keys(ex).length > 1
      ? Object.keys(ex).map((k) => {
          const rest = { ...ex };
          delete rest[k];
          return [i + 1, k, rest] as const;
        })
      : [],
  );

  it.each(dropOne)('set %i without %s is rejected at the root', (_n, _k, rest) => {
    expect(satisfiesRequiredKeySet(rest)).toBe(false);
    const found = issues(rest).filter((i) => i.path.length === 0 && /key sets/.test(i.message));
    expect(found).toHaveLength(1);
  });

  it('rejects an empty object with a message listing the sets', () => {
    const [only, ...more] = issues({});
    expect(more).toEqual([]);
    expect(only.path).toEqual([]);
    expect(only.message).toContain('provider + api_key');
    expect(only.message).toContain('strategy + targets');
    expect(only.message).toContain('output_guardrails');
  });

  it('does not count keys whose value is undefined', () => {
    expect(satisfiesRequiredKeySet({ provider: 'openai', api_key: undefined })).toBe(false);
    expect(satisfiesRequiredKeySet({ virtual_key: undefined, cache: { mode: 'simple' } })).toBe(true);
  });

  it('accepts a catalog slug (@slug) on its own, but not a bare provider name', () => {
    expect(satisfiesRequiredKeySet({ provider: '@openai-prod' })).toBe(true);
    expectValid({ provider: '@openai-prod' });
    expect(satisfiesRequiredKeySet({ provider: 'openai' })).toBe(false);
  });

  it('checks only the root: a target with no key set of its own is accepted here', () => {
    expectValid({ strategy: { mode: 'loadbalance' }, targets: [{ weight: 1 }, { weight: 2, name: 'b' }] });
  });

  it('rejects non-objects', () => {
    for (const v of [null, 5, 'x', [], [leaf()]]) expect(ConfigSchema.safeParse(v).success).toBe(false);
  });
});

describe('unknown keys', () => {
  it('are rejected at the root', () => {
    const found = issues({ ...leaf(), providr: 'x' });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ path: [], code: 'unrecognized_keys' });
    expect(found[0].message).toContain('providr');
  });

  it('are rejected inside targets, with the target path', () => {
    const found = issues({ strategy: { mode: 'fallback' }, targets: [leaf(), { ...leaf(), wieght: 2 }] });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ path: ['targets', 1], code: 'unrecognized_keys' });
    expect(found[0].message).toContain('wieght');
  });

  it.each([
    ['strategy', { strategy: { mode: 'fallback', extra: 1 }, targets: [leaf()] }, ['strategy']],
    ['cache', { cache: { mode: 'simple', ttl: 5 } }, ['cache']],
    ['retry', { retry: { attempts: 1, backoff: 'x' } }, ['retry']],
    ['cb_config', { ...leaf(), cb_config: { failure_threshold: 1, cooldown_interval: 30_000, x: 1 } }, ['cb_config']],
    ['deployments', { ...leaf(), deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', x: 1 }] }, ['deployments', 0]],
    ['conditions', {
      strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a', else: 'b' }], default: 'a' },
      targets: [{ ...leaf(), name: 'a' }],
    }, ['strategy', 'conditions', 0]],
    ['hook checks', { before_request_hooks: [{ id: 'h', checks: [{ id: 'c', parameters: {}, x: 1 }] }] }, ['before_request_hooks', 0, 'checks', 0]],
    ['feedback', { before_request_hooks: [{ id: 'h', on_fail: { feedback: { value: 1, score: 2 } } }] }, ['before_request_hooks', 0, 'on_fail', 'feedback']],
  ])('are rejected in %s', (_name, input, path) => {
    const found = issues(input);
    expect(found.map((i) => [i.path, i.code])).toEqual([[path, 'unrecognized_keys']]);
  });
});

describe('enums', () => {
  it.each(['single', 'loadbalance', 'fallback', 'race'])('strategy.mode %s is accepted', (mode) => {
    const c = expectValid({ strategy: { mode }, targets: [leaf()] });
    expect(c.strategy?.mode).toBe(mode);
  });

  it('strategy.mode conditional is accepted with conditions and default', () => {
    const c = expectValid({
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'big' }], default: 'small' },
      targets: [{ ...leaf('1'), name: 'big' }, { ...leaf('2'), name: 'small' }],
    });
    expect(c.strategy?.conditions?.[0].then).toBe('big');
  });

  it.each([
    ['strategy.mode', { strategy: { mode: 'roundrobin' }, targets: [leaf()] }, ['strategy', 'mode']],
    ['cache.mode', { cache: { mode: 'exact' } }, ['cache', 'mode']],
    ['cloud_a_deployment_type', { provider: 'p', cloud_a_endpoint_name: 'e', cloud_a_deployment_type: 'dedicated' }, ['cloud_a_deployment_type']],
  ])('%s rejects an unknown value', (_name, input, path) => {
    expect(issues(input).map((i) => [i.path, i.code])).toContainEqual([path, 'invalid_value']);
  });

  it.each(['simple', 'semantic'])('cache.mode %s is accepted', (mode) => {
    expect(expectValid({ cache: { mode, max_age: 60 } }).cache?.mode).toBe(mode);
  });

  it.each(['serverless', 'managed'])('cloud_a_deployment_type %s is accepted', (t) => {
    const c = expectValid({ provider: 'p', cloud_a_endpoint_name: 'e', cloud_a_deployment_type: t });
    expect(c.cloud_a_deployment_type).toBe(t);
  });
});

describe('strategy rules', () => {
  const targets = [{ ...leaf('1'), name: 'a' }, { ...leaf('2'), name: 'b' }];

  it.each([
    ['without conditions', { mode: 'conditional', default: 'a' }, [['strategy', 'conditions']]],
    ['with empty conditions', { mode: 'conditional', conditions: [], default: 'a' }, [['strategy', 'conditions']]],
    ['without default', { mode: 'conditional', conditions: [{ query: {}, then: 'a' }] }, [['strategy', 'default']]],
    ['without both', { mode: 'conditional' }, [['strategy', 'conditions'], ['strategy', 'default']]],
  ])('conditional %s is rejected', (_name, strategy, expected) => {
    expect(paths({ strategy, targets })).toEqual(expected);
  });

  it('a condition needs query (an object) and then', () => {
    const base = { mode: 'conditional', default: 'a' };
    expect(paths({ strategy: { ...base, conditions: [{ then: 'a' }] }, targets })).toEqual([
      ['strategy', 'conditions', 0, 'query'],
    ]);
    expect(paths({ strategy: { ...base, conditions: [{ query: 'x', then: 'a' }] }, targets })).toEqual([
      ['strategy', 'conditions', 0, 'query'],
    ]);
    expect(paths({ strategy: { ...base, conditions: [{ query: {} }] }, targets })).toEqual([
      ['strategy', 'conditions', 0, 'then'],
    ]);
  });

  it.each([
    ['conditions on fallback', { mode: 'fallback', conditions: [{ query: {}, then: 'a' }] }, ['strategy', 'conditions']],
    ['default on loadbalance', { mode: 'loadbalance', default: 'a' }, ['strategy', 'default']],
    ['on_status_codes on loadbalance', { mode: 'loadbalance', on_status_codes: [429] }, ['strategy', 'on_status_codes']],
    ['on_status_codes on race', { mode: 'race', on_status_codes: [429] }, ['strategy', 'on_status_codes']],
    ['hedge_after_ms on fallback', { mode: 'fallback', hedge_after_ms: 200 }, ['strategy', 'hedge_after_ms']],
    ['hedge_after_ms on single', { mode: 'single', hedge_after_ms: 200 }, ['strategy', 'hedge_after_ms']],
    ['algorithm on fallback', { mode: 'fallback', algorithm: 'least_latency' }, ['strategy', 'algorithm']],
    ['algorithm on race', { mode: 'race', algorithm: 'weighted' }, ['strategy', 'algorithm']],
  ])('%s is rejected', (_name, strategy, path) => {
    const found = issues({ strategy, targets });
    expect(found.map((i) => i.path)).toEqual([path]);
    expect(found[0].message).toMatch(/only allowed when mode is/);
  });

  it('race accepts hedge_after_ms (0 included)', () => {
    expect(expectValid({ strategy: { mode: 'race', hedge_after_ms: 250 }, targets }).strategy?.hedge_after_ms).toBe(250);
    expect(expectValid({ strategy: { mode: 'race', hedge_after_ms: 0 }, targets }).strategy?.hedge_after_ms).toBe(0);
  });

  it.each(['weighted', 'least_latency'])('loadbalance accepts algorithm %j', (v) => {
    expect(expectValid({ strategy: { mode: 'loadbalance', algorithm: v }, targets }).strategy?.algorithm).toBe(v);
  });

  it.each(['fastest', 'LEAST_LATENCY', '', 1, null])('loadbalance rejects algorithm %j', (v) => {
    expect(paths({ strategy: { mode: 'loadbalance', algorithm: v }, targets })).toEqual([['strategy', 'algorithm']]);
  });

  it.each([-1, 1.5, '100'])('race rejects hedge_after_ms %j', (v) => {
    expect(paths({ strategy: { mode: 'race', hedge_after_ms: v }, targets })).toEqual([['strategy', 'hedge_after_ms']]);
  });

  it('fallback accepts on_status_codes in the strategy', () => {
    const c = expectValid({ strategy: { mode: 'fallback', on_status_codes: [429, 503] }, targets });
    expect(c.strategy?.on_status_codes).toEqual([429, 503]);
  });

  it.each(['loadbalance', 'fallback', 'race'])('%s without targets is rejected at targets', (mode) => {
    expect(paths({ strategy: { mode }, virtual_key: 'vk' })).toEqual([['targets']]);
  });

  it.each(['loadbalance', 'fallback', 'race', 'single'])('%s with empty targets is rejected', (mode) => {
    expect(paths({ strategy: { mode }, targets: [] })).toEqual([['targets']]);
  });

  it('targets without strategy are rejected', () => {
    const found = issues({ targets: [leaf()], virtual_key: 'vk' });
    expect(found.map((i) => i.path)).toEqual([['targets']]);
    expect(found[0].message).toMatch(/requires a strategy/);
  });

  it('single mode needs no targets, and accepts them', () => {
    expect(expectValid({ strategy: { mode: 'single' }, ...leaf() }).targets).toBeUndefined();
    expect(expectValid({ strategy: { mode: 'single' }, targets: [leaf()] }).targets).toHaveLength(1);
  });

  it('strategy needs a mode', () => {
    expect(paths({ strategy: {}, targets })).toEqual([['strategy', 'mode']]);
  });
});

describe('retry', () => {
  it('coerces string status codes to numbers', () => {
    const c = expectValid({ retry: { attempts: 2, on_status_codes: ['429', 500, ' 503 '] } });
    expect(c.retry?.on_status_codes).toEqual([429, 500, 503]);
  });

  it('accepts an empty on_status_codes and use_retry_after_headers', () => {
    const c = expectValid({ retry: { attempts: 0, on_status_codes: [], use_retry_after_headers: true } });
    expect(c.retry).toEqual({ attempts: 0, on_status_codes: [], use_retry_after_headers: true });
  });

  it.each([
    ['abc', ['retry', 'on_status_codes', 0]],
    ['600', ['retry', 'on_status_codes', 0]],
    [99, ['retry', 'on_status_codes', 0]],
    [429.5, ['retry', 'on_status_codes', 0]],
    [true, ['retry', 'on_status_codes', 0]],
  ])('rejects the status code %j', (code, path) => {
    expect(paths({ retry: { attempts: 1, on_status_codes: [code] } })).toEqual([path]);
  });

  it.each([0, 10])('accepts attempts %i', (attempts) => {
    expect(expectValid({ retry: { attempts } }).retry?.attempts).toBe(attempts);
  });

  it.each([-1, 11, 1.5, '3', undefined])('rejects attempts %j', (attempts) => {
    expect(paths({ retry: { attempts } })).toEqual([['retry', 'attempts']]);
  });

  it('rejects a non-boolean use_retry_after_headers', () => {
    expect(paths({ retry: { attempts: 1, use_retry_after_headers: 'yes' } })).toEqual([
      ['retry', 'use_retry_after_headers'],
    ]);
  });
});

describe('cb_config', () => {
  const cb = (o: Record<string, unknown>) => ({ ...leaf(), cb_config: o });

  it('accepts the minimums', () => {
    const c = expectValid(cb({ failure_threshold: 1, cooldown_interval: 30_000, failure_status_codes: [500, 503] }));
    expect(c.cb_config).toEqual({ failure_threshold: 1, cooldown_interval: 30_000, failure_status_codes: [500, 503] });
  });

  it.each([
    ['failure_threshold 0', { failure_threshold: 0, cooldown_interval: 30_000 }, ['cb_config', 'failure_threshold']],
    ['cooldown_interval 29999', { failure_threshold: 1, cooldown_interval: 29_999 }, ['cb_config', 'cooldown_interval']],
    ['missing failure_threshold', { cooldown_interval: 30_000 }, ['cb_config', 'failure_threshold']],
    ['missing cooldown_interval', { failure_threshold: 3 }, ['cb_config', 'cooldown_interval']],
    ['failure status 600', { failure_threshold: 3, cooldown_interval: 60_000, failure_status_codes: [600] }, ['cb_config', 'failure_status_codes', 0]],
  ])('rejects %s', (_name, value, path) => {
    expect(paths(cb(value))).toEqual([path]);
  });
});

describe('field types', () => {
  it.each([
    ['request_timeout 0', { request_timeout: 0 }, ['request_timeout']],
    ['request_timeout -5', { request_timeout: -5 }, ['request_timeout']],
    ['request_timeout 1.5', { request_timeout: 1.5 }, ['request_timeout']],
    ['request_timeout string', { request_timeout: '1000' }, ['request_timeout']],
    ['weight -1', { ...leaf(), weight: -1 }, ['weight']],
    ['weight string', { ...leaf(), weight: '1' }, ['weight']],
    ['on_status_codes 99', { ...leaf(), on_status_codes: [99] }, ['on_status_codes', 0]],
    ['on_status_codes 600', { ...leaf(), on_status_codes: [500, 600] }, ['on_status_codes', 1]],
    ['override_params array', { ...leaf(), override_params: ['gpt-4o'] }, ['override_params']],
    ['override_params string', { ...leaf(), override_params: 'gpt-4o' }, ['override_params']],
    ['forward_headers empty name', { forward_headers: ['x-a', ''] }, ['forward_headers', 1]],
    ['forward_headers string', { forward_headers: 'x-a' }, ['forward_headers']],
    ['provider empty', { provider: '', api_key: 'k' }, ['provider']],
    ['api_key number', { provider: 'p', api_key: 5 }, ['api_key']],
    ['name number', { ...leaf(), name: 1 }, ['name']],
    ['strict_vendor_compliance string', { ...leaf(), strict_vendor_compliance: 'true' }, ['strict_vendor_compliance']],
    ['cloud_c_service_account_json string', { provider: 'p', cloud_c_region: 'r', cloud_c_service_account_json: '{}' }, ['cloud_c_service_account_json']],
    ['cloud_b_region number', { ...leaf(), cloud_b_region: 1 }, ['cloud_b_region']],
    ['cache.max_age 0', { cache: { mode: 'simple', max_age: 0 } }, ['cache', 'max_age']],
    ['cache.max_age 1.5', { cache: { mode: 'simple', max_age: 1.5 } }, ['cache', 'max_age']],
    ['deployments missing alias', { ...leaf(), deployments: [{ deployment_id: 'd', api_version: 'v' }] }, ['deployments', 0, 'alias']],
    ['deployments is_default string', { ...leaf(), deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', is_default: 'yes' }] }, ['deployments', 0, 'is_default']],
  ])('rejects %s', (_name, input, path) => {
    expect(paths(input)).toEqual([path]);
  });

  it('accepts every optional field with its type', () => {
    const full = {
      name: 'main',
      strict_vendor_compliance: false,
      provider: '@openai-prod',
      api_key: 'sk',
      virtual_key: 'vk',
      prompt_id: 'pp',
      weight: 0,
      on_status_codes: [429, 500],
      override_params: { model: 'gpt-4o', temperature: 0.2, logit_bias: { '50256': -100 } },
      request_timeout: 30_000,
      cache: { mode: 'semantic', max_age: 3600 },
      retry: { attempts: 3, on_status_codes: [429], use_retry_after_headers: true },
      cb_config: { failure_threshold: 5, cooldown_interval: 60_000 },
      custom_host: 'https://llm.internal:8443/v1',
      forward_headers: ['x-tenant'],
      resource_name: 'res',
      deployment_id: 'dep',
      api_version: '2024-06-01',
      deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', is_default: true }],
      vendor_organization: 'org',
      vendor_project: 'proj',
      cloud_a_region: 'eastus',
      cloud_a_deployment_name: 'n',
      cloud_a_deployment_type: 'serverless',
      cloud_a_endpoint_name: 'e',
      cloud_a_api_version: 'v',
      cloud_b_access_key_id: 'id',
      cloud_b_secret_access_key: 'secret',
      cloud_b_region: 'us-east-1',
      cloud_b_session_token: 'tok',
      cloud_c_project_id: 'p',
      cloud_c_region: 'r',
      cloud_c_service_account_json: { type: 'service_account', private_key: 'k' },
    };
    expect(expectValid(full)).toEqual(full);
  });

  it.each(['http://localhost:11434', 'https://llm.internal:8443/v1', 'http://10.0.0.5/v1/'])(
    'custom_host %s is accepted',
    (host) => {
      expect(expectValid({ provider: 'p', custom_host: host }).custom_host).toBe(host);
    },
  );

  it.each(['ftp://host/x', 'localhost:11434', 'not a url', '', 'file:///etc/passwd'])(
    'custom_host %j is rejected with a clear message',
    (host) => {
      const found = issues({ provider: 'p', custom_host: host });
      expect(found.map((i) => i.path)).toEqual([['custom_host']]);
      expect(found[0].message).toMatch(/http:\/\/ or https:\/\//);
    },
  );
});

describe('nested targets', () => {
  const deep = (inner: Record<string, unknown>) => ({
    strategy: { mode: 'fallback', on_status_codes: [429] },
    targets: [
      { virtual_key: 'vk-0' },
      {
        strategy: { mode: 'loadbalance' },
        targets: [
          { ...leaf('1'), weight: 1 },
          {
            strategy: { mode: 'race', hedge_after_ms: 100 },
            targets: [inner, leaf('3')],
          },
        ],
      },
    ],
  });

  it('accepts three levels', () => {
    const c = expectValid(deep(leaf('2')));
    expect(c.targets?.[1].targets?.[1].targets?.[0].api_key).toBe('sk-2');
    expect(c.targets?.[1].targets?.[1].strategy?.mode).toBe('race');
  });

  it('reports a bad field three levels deep with its full path', () => {
    const found = issues(deep({ ...leaf('2'), cb_config: { failure_threshold: 0, cooldown_interval: 30_000 } }));
    expect(found.map((i) => i.path)).toEqual([['targets', 1, 'targets', 1, 'targets', 0, 'cb_config', 'failure_threshold']]);
  });

  it('reports an unknown key three levels deep with its full path', () => {
    const found = issues(deep({ ...leaf('2'), retries: 3 }));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ path: ['targets', 1, 'targets', 1, 'targets', 0], code: 'unrecognized_keys' });
  });

  it('applies the strategy rules inside targets', () => {
    expect(paths(deep({ strategy: { mode: 'fallback' } }))).toEqual([['targets', 1, 'targets', 1, 'targets', 0, 'targets']]);
    expect(paths(deep({ targets: [leaf()] }))).toEqual([['targets', 1, 'targets', 1, 'targets', 0, 'targets']]);
  });

  it('reports every bad path, not only the first', () => {
    const found = paths({
      strategy: { mode: 'fallback' },
      targets: [
        { ...leaf(), retry: { attempts: 20 } },
        { ...leaf(), weight: -1 },
        { ...leaf(), cache: { mode: 'fuzzy' } },
      ],
    });
    expect(found).toEqual([
      ['targets', 0, 'retry', 'attempts'],
      ['targets', 1, 'weight'],
      ['targets', 2, 'cache', 'mode'],
    ]);
  });
});

describe('hooks', () => {
  it('accepts before_request_hooks with checks and deny', () => {
    const hooks = [
      {
        id: 'pii',
        type: 'guardrail',
        checks: [{ id: 'default.regexMatch', parameters: { rule: '\\d{16}' } }],
        on_fail: { feedback: { value: -1, weight: 1, metadata: { why: 'pii' } }, deny: true },
        on_success: { feedback: { value: 1 }, deny: false },
      },
    ];
    expect(expectValid({ before_request_hooks: hooks }).before_request_hooks).toEqual(hooks);
  });

  it('accepts after_request_hooks with async and feedback', () => {
    const hooks = [{ id: 'h', async: true, on_fail: { feedback: { value: 0 } }, on_success: {} }];
    expect(expectValid({ after_request_hooks: hooks }).after_request_hooks).toEqual(hooks);
  });

  it.each(['on_fail', 'on_success'])('rejects deny in after_request_hooks %s', (k) => {
    const found = issues({ after_request_hooks: [{ id: 'h', [k]: { deny: true } }] });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ path: ['after_request_hooks', 0, k], code: 'unrecognized_keys' });
    expect(found[0].message).toContain('deny');
  });

  it.each([
    ['hook without id', { before_request_hooks: [{ type: 'guardrail' }] }, ['before_request_hooks', 0, 'id']],
    ['async on a before hook', { before_request_hooks: [{ id: 'h', async: true }] }, ['before_request_hooks', 0]],
    ['check without parameters', { after_request_hooks: [{ id: 'h', checks: [{ id: 'c' }] }] }, ['after_request_hooks', 0, 'checks', 0, 'parameters']],
    ['check without id', { before_request_hooks: [{ id: 'h', checks: [{ parameters: {} }] }] }, ['before_request_hooks', 0, 'checks', 0, 'id']],
    ['feedback value string', { before_request_hooks: [{ id: 'h', on_fail: { feedback: { value: 'bad' } } }] }, ['before_request_hooks', 0, 'on_fail', 'feedback', 'value']],
    ['feedback metadata array', { after_request_hooks: [{ id: 'h', on_success: { feedback: { metadata: [] } } }] }, ['after_request_hooks', 0, 'on_success', 'feedback', 'metadata']],
    ['deny string', { before_request_hooks: [{ id: 'h', on_fail: { deny: 'yes' } }] }, ['before_request_hooks', 0, 'on_fail', 'deny']],
    ['hooks not an array', { before_request_hooks: { id: 'h' } }, ['before_request_hooks']],
  ])('rejects %s', (_name, input, path) => {
    expect(paths(input)).toEqual([path]);
  });
});

describe('guardrail entries', () => {
  it.each(['input_guardrails', 'output_guardrails'])('%s accepts strings and objects with object-valued extra keys', (k) => {
    const entries = [
      'pg-abc',
      { id: 'g1', deny: true, async: false, 'default.contains': { words: ['x'] }, 'default.regexMatch': { rule: 'a+' } },
      { on_fail: { feedback: { value: -1 } }, on_success: { feedback: { weight: 2 } } },
    ];
    expect(expectValid({ [k]: entries })).toEqual({ [k]: entries });
  });

  it('output guardrails allow deny in on_fail and on_success', () => {
    const entries = [{ id: 'g', on_fail: { deny: true }, on_success: { deny: false } }];
    expect(expectValid({ output_guardrails: entries }).output_guardrails).toEqual(entries);
  });

  it('input guardrails reject deny in on_fail', () => {
    const found = issues({ input_guardrails: [{ id: 'g', on_fail: { deny: true } }] });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ path: ['input_guardrails', 0, 'on_fail'], code: 'unrecognized_keys' });
  });

  it.each([
    ['a number extra key', [{ id: 'g', 'default.contains': 5 }], ['input_guardrails', 0, 'default.contains']],
    ['a string extra key', ['ok', { 'default.contains': 'x' }], ['input_guardrails', 1, 'default.contains']],
    ['an array extra key', [{ 'default.contains': ['x'] }], ['input_guardrails', 0, 'default.contains']],
    ['an empty string', [''], ['input_guardrails', 0]],
    ['a number', [7], ['input_guardrails', 0]],
    ['a non-boolean deny', [{ deny: 'yes' }], ['input_guardrails', 0, 'deny']],
    ['a non-string id', [{ id: 3 }], ['input_guardrails', 0, 'id']],
  ])('input_guardrails reject %s', (_name, entries, path) => {
    expect(paths({ input_guardrails: entries })).toEqual([path]);
  });

  it('names the extra key in the message when its value is not an object', () => {
    const found = issues({ output_guardrails: [{ 'default.contains': true }] });
    expect(found[0].message).toMatch(/must be an object/);
  });

  it('reports guardrail errors inside targets with the full path', () => {
    expect(
      paths({
        strategy: { mode: 'fallback' },
        targets: [leaf(), { ...leaf(), output_guardrails: ['ok', { id: 'g', check: 1 }] }],
      }),
    ).toEqual([['targets', 1, 'output_guardrails', 1, 'check']]);
  });
});

describe('parseConfig', () => {
  it('returns the parsed config, with coercions applied', () => {
    const c = parseConfig({ retry: { attempts: 1, on_status_codes: ['429'] } });
    expect(c).toEqual({ retry: { attempts: 1, on_status_codes: [429] } });
    // Type-level: the recursive type keeps its fields.
    expectTypeOf(c.targets).toEqualTypeOf<Config[] | undefined>();
    expectTypeOf(c.retry).toEqualTypeOf<
      { attempts: number; on_status_codes?: number[] | undefined; use_retry_after_headers?: boolean | undefined } | undefined
    >();
  });

  function thrown(input: unknown, prefix?: (string | number)[]): GatewayError {
    try {
      if (prefix) parseConfig(input, prefix);
      else parseConfig(input);
    } catch (e) {
      expect(e).toBeInstanceOf(GatewayError);
      return e as GatewayError;
    }
    throw new Error('parseConfig did not throw');
  }

  it('throws GatewayError invalid_config (400) listing every bad path, prefixed with config', () => {
    const e = thrown({
      strategy: { mode: 'fallback' },
      targets: [leaf(), { ...leaf(), retry: { attempts: 11 } }, { ...leaf(), bogus: true }],
    });
    expect(e.status).toBe(400);
    expect(e.code).toBe('invalid_config');
    expect(e.type).toBe('invalid_request_error');
    expect(e.issues?.map((i) => i.path)).toEqual([
      ['config', 'targets', 1, 'retry', 'attempts'],
      ['config', 'targets', 2],
    ]);
    expect(e.param).toBe('config.targets[1].retry.attempts');
    expect(e.message).toContain('config.targets[1].retry.attempts');
    expect(e.message).toContain('and 1 more');
  });

  it('reports the missing key sets at the config path', () => {
    const e = thrown({});
    expect(e.issues).toHaveLength(1);
    expect(e.issues?.[0].path).toEqual(['config']);
    expect(e.param).toBe('config');
    expect(e.message).toMatch(/key sets/);
  });

  it('uses the given prefix', () => {
    const e = thrown({ cache: { mode: 'nope' } }, ['pipelines', 'main.json']);
    expect(e.issues?.[0].path).toEqual(['pipelines', 'main.json', 'cache', 'mode']);
  });

  it('answers a non-object with invalid_config', () => {
    const e = thrown('not an object');
    expect(e.code).toBe('invalid_config');
    expect(e.issues?.[0].path).toEqual(['config']);
  });
});
