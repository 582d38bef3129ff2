/**
 * A provider field that the chosen provider does not use is a 400 naming it, whichever
 * way it came in (config, virtual key, loose header), never silently dropped; an unknown slug lists the
 * known ones.
 */
import { describe, expect, it } from 'vitest';
import type { VirtualKey } from '../../src/config/bootstrap.js';
import type { Headers } from '../../src/config/headers.js';
import { providerFields } from '../../src/config/provider-fields.js';
import { parseConfig } from '../../src/config/schema.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { buildPlan, type PlanDeps } from '../../src/plan/build-plan.js';
import { ConfigResolver } from '../../src/plan/resolve.js';
import type { StrategyNode, TargetNode } from '../../src/plan/types.js';
import { openAICompatible } from '../../src/providers/openai-compatible/index.js';
import { ProviderRegistry, defaultProviders } from '../../src/providers/registry.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { MemoryVersionedStore } from '../../src/state/memory/versioned-store.js';
import type { Config } from '../../src/config/schema.js';

/** A test provider that takes the cloud B fields and no api_key (as a request signer would). */
const signer = openAICompatible({
  id: 'test-signer',
  baseUrl: 'https://signer.example.com/v1',
  paths: { chat: '/chat/completions' },
  auth: { header: 'authorization', scheme: 'Bearer' },
  fields: providerFields('custom_host', 'cloud_b'),
});
/** A test provider without custom_host. */
const fixedHost = openAICompatible({
  id: 'test-fixed',
  baseUrl: 'https://fixed.example.com/v1',
  paths: { chat: '/chat/completions' },
  auth: { header: 'authorization', scheme: 'Bearer' },
  fields: providerFields('api_key'),
});

const deps: PlanDeps = {
  virtualKeys: new MemoryVersionedStore<VirtualKey>([
    ['vk-ok', { provider: 'openai', api_key: 'sk-fake-vk' }],
    ['vk-bad', { provider: 'openai', api_key: 'sk-fake-vk', cloud_b_region: 'us-east-1' }],
    ['vk-signer', { provider: 'test-signer', cloud_b_access_key_id: 'AKIDFAKE', cloud_b_secret_access_key: 'fake-secret' }],
  ]),
  registry: new ProviderRegistry([...defaultProviders(), signer as never, fixedHost as never]),
  hostGuard: new HostGuard({ trusted: [] }),
};

function planError(config: unknown): GatewayError {
  try {
    buildPlan(parseConfig(config), deps);
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return e as GatewayError;
  }
  throw new Error('expected buildPlan to throw');
}

function resolveError(headers: Headers): GatewayError {
  try {
    new ConfigResolver(deps, new MemoryVersionedStore<Config>()).resolve(headers);
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return e as GatewayError;
  }
  throw new Error('expected resolve to throw');
}

describe('a provider field the provider does not use is a 400 naming it', () => {
  it('in a config target: the JSON path of the field', () => {
    const e = planError({
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'sk-fake-a' },
        { provider: 'openai', api_key: 'sk-fake-b', cloud_b_region: 'us-east-1' },
      ],
    });
    expect(e.code).toBe('invalid_config');
    expect(e.status).toBe(400);
    expect(e.param).toBe('config.targets[1].cloud_b_region');
    expect(e.message).toContain('"openai" does not use cloud_b_region');
    expect(e.issues?.[0]?.path).toEqual(['config', 'targets', 1, 'cloud_b_region']);
  });

  it.each([
    ['deployment_id', 'dep-1'],
    ['resource_name', 'res'],
    ['cloud_a_region', 'eastus'],
    ['cloud_c_project_id', 'proj'],
    ['cloud_c_service_account_json', { private_key: 'fake' }],
  ])('%s with provider openai at the root', (field, value) => {
    const e = planError({ provider: 'openai', api_key: 'sk-fake', [field]: value });
    expect(e.code).toBe('invalid_config');
    expect(e.param).toBe(`config.${field}`);
  });

  it('never echoes the value of a secret field it refuses', () => {
    const e = planError({ provider: 'openai', api_key: 'sk-fake', cloud_b_secret_access_key: 'very-secret-value-123' });
    expect(e.param).toBe('config.cloud_b_secret_access_key');
    expect(JSON.stringify({ m: e.message, i: e.issues })).not.toContain('very-secret-value-123');
  });

  it('api_key with a provider that does not take one', () => {
    const e = planError({ provider: 'test-signer', api_key: 'sk-fake', cloud_b_access_key_id: 'AKIDFAKE', cloud_b_secret_access_key: 'x' });
    expect(e.param).toBe('config.api_key');
  });

  it('the fields the provider does use pass, and reach target.extra', () => {
    const t = buildPlan(
      parseConfig({ provider: 'test-signer', cloud_b_access_key_id: 'AKIDFAKE', cloud_b_secret_access_key: 'x', cloud_b_region: 'eu-west-1' }),
      deps,
    ) as TargetNode;
    expect(t.target.extra).toEqual({ cloud_b_access_key_id: 'AKIDFAKE', cloud_b_secret_access_key: 'x', cloud_b_region: 'eu-west-1' });
  });

  it('in a virtual key: its path in the bootstrap file', () => {
    const e = planError({ strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'vk-ok' }, { virtual_key: 'vk-bad' }] });
    expect(e.code).toBe('invalid_config');
    expect(e.param).toBe('virtual_keys.vk-bad.cloud_b_region');
    expect(e.message).toContain('config.targets[1]');
    // `@id` names the same key.
    expect(planError({ provider: '@vk-bad' }).param).toBe('virtual_keys.vk-bad.cloud_b_region');
  });

  it('a virtual key whose fields fit its provider passes', () => {
    const t = buildPlan(parseConfig({ virtual_key: 'vk-signer' }), deps) as TargetNode;
    expect(t.target.provider).toBe('test-signer');
  });

  it('a config field beside a virtual key is checked against the key provider', () => {
    expect(planError({ virtual_key: 'vk-ok', cloud_c_region: 'us-central1' }).param).toBe('config.cloud_c_region');
  });

  it('set by a loose header: the header is named', () => {
    const e = resolveError({ 'x-gateway-provider': 'openai', authorization: 'Bearer sk-fake', 'x-gateway-cloud-b-region': 'us-east-1' });
    expect(e.code).toBe('invalid_config');
    expect(e.param).toBe('x-gateway-cloud-b-region');
    expect(e.message).toContain('cloud_b_region (set by header x-gateway-cloud-b-region)');
    const e2 = resolveError({ 'x-gateway-provider': 'groq', authorization: 'Bearer sk-fake', 'x-gateway-cloud-a-deployment-id': 'dep' });
    expect(e2.param).toBe('x-gateway-cloud-a-deployment-id');
  });

  it('a field the inline config sets, beside headers, keeps its config path', () => {
    const e = resolveError({
      'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'sk-fake', cloud_b_region: 'us-east-1' }),
      'x-gateway-cloud-b-region': 'eu-west-1',
    });
    expect(e.param).toBe('config.cloud_b_region');
  });

  it('Authorization is not forced on a provider that takes no api_key', () => {
    const p = new ConfigResolver(deps, new MemoryVersionedStore<Config>()).resolve({
      'x-gateway-provider': 'test-signer',
      authorization: 'Bearer sdk-placeholder',
      'x-gateway-cloud-b-access-key-id': 'AKIDFAKE',
      'x-gateway-cloud-b-secret-access-key': 'fake-secret',
    }) as TargetNode;
    expect(p.target.api_key).toBeUndefined();
    expect(p.target.extra).toEqual({ cloud_b_access_key_id: 'AKIDFAKE', cloud_b_secret_access_key: 'fake-secret' });
  });

  it('on a strategy node (provider fields are never inherited): refused, custom_host excepted', () => {
    const targets = [{ provider: 'openai', api_key: 'sk-fake' }];
    expect(planError({ strategy: { mode: 'fallback' }, targets, cloud_b_region: 'us-east-1' }).param).toBe('config.cloud_b_region');
    const e = resolveError({ 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets }), 'x-gateway-vendor-organization': 'org-x' });
    expect(e.param).toBe('x-gateway-vendor-organization');
    const ok = buildPlan(parseConfig({ strategy: { mode: 'fallback' }, targets, custom_host: 'https://llm.example.com/v1' }), deps) as StrategyNode;
    expect((ok.children[0] as TargetNode).target.custom_host).toBe('https://llm.example.com/v1');
  });

  it('inherited settings do not trip it: an inherited custom_host reaches only providers that take one', () => {
    const p = buildPlan(
      parseConfig({
        strategy: { mode: 'fallback' },
        custom_host: 'https://llm.example.com/v1',
        targets: [
          { provider: 'openai', api_key: 'sk-fake-a' },
          { provider: 'test-fixed', api_key: 'sk-fake-b' },
        ],
      }),
      deps,
    ) as StrategyNode;
    expect((p.children[0] as TargetNode).target.custom_host).toBe('https://llm.example.com/v1');
    expect((p.children[1] as TargetNode).target.custom_host).toBeUndefined();
    // Its own custom_host is the provider's field: refused.
    expect(planError({ provider: 'test-fixed', api_key: 'sk-fake', custom_host: 'https://x.example.com/v1' }).param).toBe('config.custom_host');
  });
});

describe('an unknown slug', () => {
  it('is a 400 naming the field and listing the known slugs', () => {
    const e = planError({ strategy: { mode: 'fallback' }, targets: [{ provider: 'nope', api_key: 'sk-fake' }] });
    expect(e.code).toBe('unknown_provider');
    expect(e.param).toBe('config.targets[0].provider');
    for (const id of deps.registry.ids()) expect(e.message).toContain(id);
    expect(e.message).toMatch(/Known providers: openai, /);
  });
});
