import { describe, expect, it } from 'vitest';
import type { VirtualKey } from '../../src/config/bootstrap.js';
import { parseConfig } from '../../src/config/schema.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { buildPlan, type PlanDeps } from '../../src/plan/build-plan.js';
import type { PlanNode, StrategyNode, TargetNode } from '../../src/plan/types.js';
import { ProviderRegistry, defaultProviders } from '../../src/providers/registry.js';
import { openAICompatible } from '../../src/providers/openai-compatible/index.js';
import { providerFields } from '../../src/config/provider-fields.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { MemoryVersionedStore } from '../../src/state/memory/versioned-store.js';

const virtualKeys = new MemoryVersionedStore<VirtualKey>([
  ['vk-main', { provider: 'openai', api_key: 'sk-fake-vk-main', vendor_organization: 'org-fake' }],
  ['vk-local', { provider: 'ollama', custom_host: 'https://gpu.example.com/v1' }],
  ['vk-local-open', { provider: 'ollama', custom_host: 'https://gpu.example.com/v1', allow_client_destination: ['custom_host'] }],
  ['vk-private', { provider: 'ollama', custom_host: 'http://192.168.1.20:11434/v1' }],
  ['vk-ghost', { provider: 'no-such-provider', api_key: 'sk-fake' }],
]);

const deps: PlanDeps = {
  virtualKeys,
  registry: new ProviderRegistry(defaultProviders()),
  hostGuard: new HostGuard({ trusted: [] }),
};

const plan = (config: unknown): PlanNode => buildPlan(parseConfig(config), deps);

function planError(config: unknown): GatewayError {
  try {
    plan(config);
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return e as GatewayError;
  }
  throw new Error('expected buildPlan to throw');
}

const leaf = (n: string, extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: `sk-fake-${n}`, ...extra });

describe('buildPlan: plans', () => {
  it('a single target', () => {
    expect(plan({ provider: 'openai', api_key: 'sk-fake-1', request_timeout: 5000, override_params: { temperature: 0 } }))
      .toMatchInlineSnapshot(`
        {
          "declares": [],
          "id": "config",
          "kind": "target",
          "path": "config",
          "settings": {
            "override_params": {
              "temperature": 0,
            },
            "request_timeout": 5000,
          },
          "target": {
            "api_key": "sk-fake-1",
            "provider": "openai",
          },
          "weight": 1,
        }
      `);
  });

  it('a fallback of two targets', () => {
    expect(
      plan({
        strategy: { mode: 'fallback', on_status_codes: [429, 503] },
        retry: { attempts: 2 },
        targets: [leaf('a'), { provider: '@groq', api_key: 'sk-fake-b', name: 'backup', weight: 0.5 }],
      }),
    ).toMatchInlineSnapshot(`
      {
        "children": [
          {
            "declares": [],
            "id": "config.targets[0]",
            "kind": "target",
            "path": "config.targets[0]",
            "settings": {
              "retry": {
                "attempts": 2,
              },
            },
            "target": {
              "api_key": "sk-fake-a",
              "provider": "openai",
            },
            "weight": 1,
          },
          {
            "declares": [],
            "id": "backup",
            "kind": "target",
            "name": "backup",
            "path": "config.targets[1]",
            "settings": {
              "retry": {
                "attempts": 2,
              },
            },
            "target": {
              "api_key": "sk-fake-b",
              "provider": "groq",
            },
            "weight": 0.5,
          },
        ],
        "declares": [],
        "kind": "fallback",
        "on_status_codes": [
          429,
          503,
        ],
        "path": "config",
        "settings": {
          "retry": {
            "attempts": 2,
          },
        },
        "weight": 1,
      }
    `);
  });

  it('a loadbalance of a fallback and a target, with inheritance flowing down three levels', () => {
    const p = plan({
      strategy: { mode: 'loadbalance' },
      retry: { attempts: 3, on_status_codes: [429] },
      override_params: { temperature: 0.2, max_tokens: 64 },
      forward_headers: ['x-tenant'],
      targets: [
        {
          strategy: { mode: 'fallback' },
          weight: 3,
          override_params: { temperature: 0.7 },
          targets: [leaf('primary', { retry: { attempts: 0 } }), leaf('secondary', { override_params: { seed: 1 }, request_timeout: 2000 })],
        },
        leaf('other', { weight: 1, forward_headers: [] }),
      ],
    });
    expect(p).toMatchInlineSnapshot(`
      {
        "children": [
          {
            "children": [
              {
                "declares": [],
                "id": "config.targets[0].targets[0]",
                "kind": "target",
                "path": "config.targets[0].targets[0]",
                "settings": {
                  "forward_headers": [
                    "x-tenant",
                  ],
                  "override_params": {
                    "max_tokens": 64,
                    "temperature": 0.7,
                  },
                  "retry": {
                    "attempts": 0,
                  },
                },
                "target": {
                  "api_key": "sk-fake-primary",
                  "provider": "openai",
                },
                "weight": 1,
              },
              {
                "declares": [],
                "id": "config.targets[0].targets[1]",
                "kind": "target",
                "path": "config.targets[0].targets[1]",
                "settings": {
                  "forward_headers": [
                    "x-tenant",
                  ],
                  "override_params": {
                    "max_tokens": 64,
                    "seed": 1,
                    "temperature": 0.7,
                  },
                  "request_timeout": 2000,
                  "retry": {
                    "attempts": 3,
                    "on_status_codes": [
                      429,
                    ],
                  },
                },
                "target": {
                  "api_key": "sk-fake-secondary",
                  "provider": "openai",
                },
                "weight": 1,
              },
            ],
            "declares": [],
            "kind": "fallback",
            "path": "config.targets[0]",
            "settings": {
              "forward_headers": [
                "x-tenant",
              ],
              "override_params": {
                "max_tokens": 64,
                "temperature": 0.7,
              },
              "retry": {
                "attempts": 3,
                "on_status_codes": [
                  429,
                ],
              },
            },
            "weight": 3,
          },
          {
            "declares": [],
            "id": "config.targets[1]",
            "kind": "target",
            "path": "config.targets[1]",
            "settings": {
              "forward_headers": [],
              "override_params": {
                "max_tokens": 64,
                "temperature": 0.2,
              },
              "retry": {
                "attempts": 3,
                "on_status_codes": [
                  429,
                ],
              },
            },
            "target": {
              "api_key": "sk-fake-other",
              "provider": "openai",
            },
            "weight": 1,
          },
        ],
        "declares": [],
        "kind": "loadbalance",
        "path": "config",
        "settings": {
          "forward_headers": [
            "x-tenant",
          ],
          "override_params": {
            "max_tokens": 64,
            "temperature": 0.2,
          },
          "retry": {
            "attempts": 3,
            "on_status_codes": [
              429,
            ],
          },
        },
        "weight": 1,
      }
    `);
    const fb = (p as StrategyNode).children[0] as StrategyNode;
    const second = fb.children[1] as TargetNode;
    expect(second.path).toBe('config.targets[0].targets[1]');
    expect(second.id).toBe('config.targets[0].targets[1]');
    expect(second.settings.retry).toEqual({ attempts: 3, on_status_codes: [429] });
    expect(second.settings.override_params).toEqual({ temperature: 0.7, max_tokens: 64, seed: 1 });
    // Settings belong to the node: the strategy fields and weight are not inherited.
    expect(second.weight).toBe(1);
  });

  it('a conditional with named targets', () => {
    expect(
      plan({
        strategy: {
          mode: 'conditional',
          conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'smart' }],
          default: 'cheap',
        },
        targets: [leaf('s', { name: 'smart' }), leaf('c', { name: 'cheap' })],
      }),
    ).toMatchInlineSnapshot(`
      {
        "children": [
          {
            "declares": [],
            "id": "smart",
            "kind": "target",
            "name": "smart",
            "path": "config.targets[0]",
            "settings": {},
            "target": {
              "api_key": "sk-fake-s",
              "provider": "openai",
            },
            "weight": 1,
          },
          {
            "declares": [],
            "id": "cheap",
            "kind": "target",
            "name": "cheap",
            "path": "config.targets[1]",
            "settings": {},
            "target": {
              "api_key": "sk-fake-c",
              "provider": "openai",
            },
            "weight": 1,
          },
        ],
        "conditions": [
          {
            "query": {
              "metadata.tier": {
                "$eq": "pro",
              },
            },
            "then": "smart",
          },
        ],
        "declares": [],
        "default": "cheap",
        "kind": "conditional",
        "path": "config",
        "settings": {},
        "weight": 1,
      }
    `);
  });

  it('virtual keys, by virtual_key and by @slug', () => {
    expect(
      plan({
        strategy: { mode: 'fallback' },
        // A bare {provider: '@slug'} meets no required key set; the inherited request_timeout does.
        request_timeout: 30_000,
        targets: [{ virtual_key: 'vk-main' }, { provider: '@vk-local' }, { virtual_key: '@vk-main', api_key: 'sk-fake-own' }],
      }),
    ).toMatchInlineSnapshot(`
      {
        "children": [
          {
            "declares": [],
            "id": "config.targets[0]",
            "kind": "target",
            "path": "config.targets[0]",
            "settings": {
              "request_timeout": 30000,
            },
            "target": {
              "api_key": "sk-fake-vk-main",
              "provider": "openai",
              "vendor_organization": "org-fake",
            },
            "weight": 1,
          },
          {
            "declares": [],
            "id": "config.targets[1]",
            "kind": "target",
            "path": "config.targets[1]",
            "settings": {
              "request_timeout": 30000,
            },
            "target": {
              "custom_host": "https://gpu.example.com/v1",
              "provider": "ollama",
            },
            "weight": 1,
          },
          {
            "declares": [],
            "id": "config.targets[2]",
            "kind": "target",
            "path": "config.targets[2]",
            "settings": {
              "request_timeout": 30000,
            },
            "target": {
              "api_key": "sk-fake-own",
              "provider": "openai",
              "vendor_organization": "org-fake",
            },
            "weight": 1,
          },
        ],
        "declares": [],
        "kind": "fallback",
        "path": "config",
        "settings": {
          "request_timeout": 30000,
        },
        "weight": 1,
      }
    `);
  });

  it('@name is a provider when no virtual key has that id', () => {
    const t = plan({ provider: '@OpenAI', api_key: 'sk-fake' }) as TargetNode;
    expect(t.target.provider).toBe('openai');
  });

  it('keeps provider-specific fields in target.extra', () => {
    // A provider that takes the deployment fields (openai does not: for it they are a 400).
    const withDeployment = new ProviderRegistry([
      ...defaultProviders(),
      openAICompatible({ id: 'deployed', baseUrl: 'https://deployed.example.com/v1', paths: { chat: '/chat/completions' }, auth: { header: 'api-key' }, fields: providerFields('api_key', 'deployment') }),
    ]);
    const config = parseConfig({ provider: 'deployed', api_key: 'sk-fake', api_version: '2024-06-01', resource_name: 'res' });
    const t = buildPlan(config, { ...deps, registry: withDeployment }) as TargetNode;
    expect(t.target.extra).toEqual({ api_version: '2024-06-01', resource_name: 'res' });
  });

  it('lets an inherited custom_host reach the target, own custom_host > inherited > a virtual key that allows clients to choose', () => {
    const p = plan({
      strategy: { mode: 'fallback' },
      custom_host: 'https://inherited.example.com/v1',
      targets: [
        { provider: 'vllm' },
        { virtual_key: 'vk-local-open' },
        { virtual_key: 'vk-local-open', custom_host: 'https://own.example.com/v1' },
      ],
    }) as StrategyNode;
    expect(p.children.map((c) => (c as TargetNode).target.custom_host)).toEqual([
      'https://inherited.example.com/v1',
      'https://inherited.example.com/v1',
      'https://own.example.com/v1',
    ]);
    // Without allow_client_destination, the key's own host is the only one (key-destination.test.ts).
    expect((plan({ virtual_key: 'vk-local' }) as TargetNode).target.custom_host).toBe('https://gpu.example.com/v1');
  });

  it('is pure: the same config gives equal plans and the config is not changed', () => {
    const config = parseConfig({ strategy: { mode: 'fallback' }, override_params: { a: 1 }, targets: [leaf('a'), leaf('b')] });
    const before = JSON.stringify(config);
    expect(buildPlan(config, deps)).toEqual(buildPlan(config, deps));
    expect(JSON.stringify(config)).toBe(before);
  });

  it('uses the given root path', () => {
    expect(buildPlan(parseConfig(leaf('a')), deps, 'pipelines.x').path).toBe('pipelines.x');
  });
});

describe('buildPlan: errors', () => {
  it('an unknown virtual key → 404 virtual_key_not_found with its path', () => {
    const e = planError({ strategy: { mode: 'fallback' }, targets: [leaf('a'), { virtual_key: 'vk-nope' }] });
    expect(e.code).toBe('virtual_key_not_found');
    expect(e.status).toBe(404);
    expect(e.param).toBe('config.targets[1].virtual_key');
  });

  it('an unknown provider → 400 unknown_provider with the param path', () => {
    const e = planError({
      strategy: { mode: 'loadbalance' },
      targets: [leaf('a'), { strategy: { mode: 'fallback' }, targets: [leaf('b'), { provider: 'nope', api_key: 'sk-fake' }] }],
    });
    expect(e.code).toBe('unknown_provider');
    expect(e.status).toBe(400);
    expect(e.param).toBe('config.targets[1].targets[1].provider');
  });

  it('a virtual key naming an unknown provider → unknown_provider at the target', () => {
    const e = planError({ virtual_key: 'vk-ghost' });
    expect(e.code).toBe('unknown_provider');
    expect(e.param).toBe('virtual_keys.vk-ghost.provider');
  });

  it('a conditional naming a missing target → 400 unknown_target', () => {
    const e = planError({
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.x': 1 }, then: 'ghost' }], default: 'a' },
      targets: [leaf('a', { name: 'a' })],
    });
    expect(e.code).toBe('unknown_target');
    expect(e.status).toBe(400);
    expect(e.param).toBe('config.strategy');
    expect(e.message).toContain('"ghost"');
  });

  it('a conditional whose default names a missing target → unknown_target', () => {
    const e = planError({
      strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a' }], default: 'fallback-target' },
      targets: [leaf('a', { name: 'a' })],
    });
    expect(e.code).toBe('unknown_target');
    expect(e.message).toContain('"fallback-target"');
  });

  it('a target meeting no required key set after inheritance → invalid_config naming it', () => {
    const config = { strategy: { mode: 'fallback' }, targets: [leaf('a'), { provider: 'openai', weight: 2 }] };
    const e = planError(config);
    expect(e.code).toBe('invalid_config');
    expect(e.status).toBe(400);
    expect(e.param).toBe('config.targets[1]');
    expect(e.issues?.[0]?.path).toEqual(['config', 'targets', 1]);
    // The same target passes when it inherits a key set from its parent (here: request_timeout).
    expect(() => plan({ ...config, request_timeout: 1000 })).not.toThrow();
  });

  it('a target with a key set but no provider → missing_provider naming it', () => {
    const e = planError({ strategy: { mode: 'fallback' }, targets: [leaf('a'), { retry: { attempts: 1 } }] });
    expect(e.code).toBe('missing_provider');
    expect(e.param).toBe('config.targets[1]');
  });

  it('a provider without a default base URL and no custom_host → invalid_config', () => {
    const e = planError({ provider: 'vllm', api_key: 'sk-fake' });
    expect(e.code).toBe('invalid_config');
    expect(e.param).toBe('custom_host');
  });

  it.each([
    ['own', { provider: 'vllm', custom_host: 'http://10.0.0.1:8000/v1' }],
    ['inherited', { strategy: { mode: 'fallback' }, custom_host: 'http://10.0.0.1/v1', targets: [{ provider: 'vllm', api_key: 'sk-fake' }] }],
    ['loopback', { provider: 'vllm', custom_host: 'http://127.0.0.1:11434/v1' }],
    ['virtual key', { virtual_key: 'vk-private' }],
  ])('custom_host to a private address (%s) is refused by the host guard', (_label, config) => {
    const e = planError(config);
    expect(e.code).toBe('custom_host_not_allowed');
    expect(e.status).toBe(400);
    expect(e.param).toBe('custom_host');
  });

  it('custom_host to a trusted private address is allowed', () => {
    const trusting: PlanDeps = { ...deps, hostGuard: new HostGuard({ trusted: ['10.0.0.0/8'] }) };
    const t = buildPlan(parseConfig({ provider: 'vllm', custom_host: 'http://10.0.0.1:8000/v1' }), trusting) as TargetNode;
    expect(t.target).toEqual({ provider: 'vllm', custom_host: 'http://10.0.0.1:8000/v1' });
  });
});

describe('buildPlan: declared stages', () => {
  it('records the stages a config level sets itself; children inherit the settings without declaring them', () => {
    const p = plan({
      cache: { mode: 'simple' },
      strategy: { mode: 'fallback' },
      targets: [leaf('a'), leaf('b', { cache: { mode: 'semantic' } })],
    }) as StrategyNode;
    expect(p.declares).toEqual(['cache']);
    expect(p.children[0]!.declares).toEqual([]);
    expect(p.children[0]!.settings.cache).toBe(p.settings.cache);
    expect(p.children[1]!.declares).toEqual(['cache']);
    expect(p.children[1]!.settings.cache?.mode).toBe('semantic');
  });
});

describe('buildPlan: prompt_id', () => {
  it('at the root: the prompt the request renders, by id or slug, a version pinned with @', () => {
    expect(plan({ ...leaf('a'), prompt_id: 'support-reply' }).prompt).toEqual({ ref: 'support-reply', param: 'config.prompt_id' });
    const pinned = plan({ strategy: { mode: 'fallback' }, targets: [leaf('a'), leaf('b')], prompt_id: 'support-reply@0b6f7c9e-3d1a-4c55-9e21-7f3a5b8c2d10' });
    expect(pinned.prompt).toEqual({ ref: 'support-reply', version_id: '0b6f7c9e-3d1a-4c55-9e21-7f3a5b8c2d10', param: 'config.prompt_id' });
    expect((pinned as StrategyNode).children.every((c) => c.prompt === undefined)).toBe(true);
    expect(plan(leaf('a')).prompt).toBeUndefined();
  });

  it.each([['@v1'], ['slug@'], ['a@b@c'], ['']])('"%s" is not a prompt: 400 invalid_config naming config.prompt_id', (id) => {
    const e = planError({ ...leaf('a'), prompt_id: id });
    expect(e.code).toBe('invalid_config');
    expect(e.param).toBe('config.prompt_id');
  });

  it('on a target it is refused (one prompt per request, rendered before routing), naming the target\'s path', () => {
    const e = planError({ strategy: { mode: 'fallback' }, targets: [leaf('a'), { ...leaf('b'), prompt_id: 'p' }] });
    expect(e.code).toBe('invalid_config');
    expect(e.param).toBe('config.targets[1].prompt_id');
    expect(e.message).toContain('root');
  });
});

describe('buildPlan: hooks and guardrails are validated with the config', () => {
  it.each([
    ['input_guardrails', { input_guardrails: [{ 'default.noSuchCheck': {}, deny: true }] }, 'config.input_guardrails[0].default.noSuchCheck'],
    ['before_request_hooks', { before_request_hooks: [{ id: 'h1', checks: [{ id: 'default.wordCount', parameters: { minWords: 'x' } }] }] }, 'config.before_request_hooks[0].checks[0].parameters'],
    ['output_guardrails (a string names a stored guardrail; none is)', { output_guardrails: ['pg-some-id'] }, 'config.output_guardrails[0]'],
  ])('%s: a bad entry is a 400 invalid_config naming its path', (_name, extra, param) => {
    const e = planError({ ...leaf('a'), ...extra });
    expect(e.code).toBe('invalid_config');
    expect(e.param).toBe(param);
  });

  it('in a nested target too, and a check that cannot run after the answer is refused there', () => {
    const e = planError({
      strategy: { mode: 'fallback' },
      targets: [leaf('a'), { ...leaf('b'), after_request_hooks: [{ id: 'h', checks: [{ id: 'default.addPrefix', parameters: { prefix: 'x' } }] }] }],
    });
    expect(e.code).toBe('invalid_config');
    expect(e.param).toContain('config.targets[1].after_request_hooks[0]');
  });

  it('valid lists compile, and empty lists ask for nothing', () => {
    expect(plan({ ...leaf('a'), input_guardrails: [{ 'default.wordCount': { minWords: 1 } }], output_guardrails: [] }).kind).toBe('target');
    expect(plan({ ...leaf('a'), input_guardrails: [], output_guardrails: [] }).kind).toBe('target');
  });
});

describe('on_status_codes on the config object (beside strategy)', () => {
  it('sets the fallback codes like strategy.on_status_codes', () => {
    const node = plan({ strategy: { mode: 'fallback' }, on_status_codes: [429], targets: [leaf('a'), leaf('b')] }) as StrategyNode;
    expect(node.on_status_codes).toEqual([429]);
  });

  it('the same list in both places is accepted; two different lists are a 400 naming the field', () => {
    const same = plan({ strategy: { mode: 'fallback', on_status_codes: [503] }, on_status_codes: [503], targets: [leaf('a'), leaf('b')] }) as StrategyNode;
    expect(same.on_status_codes).toEqual([503]);
    const e = planError({ strategy: { mode: 'fallback', on_status_codes: [503] }, on_status_codes: [429], targets: [leaf('a'), leaf('b')] });
    expect([e.code, e.param]).toEqual(['invalid_config', 'config.on_status_codes']);
  });

  it('anywhere but beside a fallback it is a 400 naming the field, not ignored', () => {
    for (const config of [
      { ...leaf('a'), on_status_codes: [429] },
      { strategy: { mode: 'loadbalance' }, on_status_codes: [429], targets: [leaf('a')] },
      { strategy: { mode: 'fallback' }, targets: [{ ...leaf('a'), on_status_codes: [429] }, leaf('b')] },
    ]) {
      const e = planError(config);
      expect(e.code).toBe('invalid_config');
      expect(e.param).toMatch(/on_status_codes$/);
    }
  });
});
