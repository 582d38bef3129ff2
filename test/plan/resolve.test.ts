import { describe, expect, it } from 'vitest';
import type { VirtualKey } from '../../src/config/bootstrap.js';
import type { Headers } from '../../src/config/headers.js';
import { ConfigResolver } from '../../src/plan/resolve.js';
import { parseConfig, type Config } from '../../src/config/schema.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import type { PlanDeps } from '../../src/plan/build-plan.js';
import type { StrategyNode, TargetNode } from '../../src/plan/types.js';
import { ProviderRegistry, defaultProviders } from '../../src/providers/registry.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { MemoryVersionedStore } from '../../src/state/memory/versioned-store.js';
import { MemoryVirtualKeyStore } from '../../src/state/memory/virtual-key-store.js';
import { thrownBy } from '../helpers/throws.js';

const deps: PlanDeps = {
  virtualKeys: new MemoryVersionedStore<VirtualKey>([['vk-main', { provider: 'openai', api_key: 'sk-fake-vk' }]]),
  registry: new ProviderRegistry(defaultProviders()),
  hostGuard: new HostGuard({ trusted: [] }),
};

const saved = new MemoryVersionedStore<Config>([
  [
    'fallback-1',
    parseConfig({
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'sk-fake-saved-a' },
        { provider: 'groq', api_key: 'sk-fake-saved-b' },
      ],
    }),
  ],
  ['single', parseConfig({ provider: 'openai', api_key: 'sk-fake-saved' })],
]);

const resolver = (cacheSize?: number) => new ConfigResolver(deps, saved, cacheSize);

function resolveError(headers: Headers, r = resolver()): GatewayError {
  try {
    r.resolve(headers);
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return e as GatewayError;
  }
  throw new Error('expected resolve to throw');
}

const target = (n: unknown): TargetNode => {
  expect((n as TargetNode).kind).toBe('target');
  return n as TargetNode;
};

describe('ConfigResolver', () => {
  it('reads an inline JSON config', () => {
    const p = target(resolver().resolve({ 'x-gateway-config': '{"provider":"groq","api_key":"sk-fake-inline"}' }));
    expect(p.target).toEqual({ provider: 'groq', api_key: 'sk-fake-inline' });
    expect(p.path).toBe('config');
  });

  it('accepts inline JSON with surrounding whitespace', () => {
    expect(target(resolver().resolve({ 'x-gateway-config': '  {"virtual_key":"vk-main"}  ' })).target.api_key).toBe('sk-fake-vk');
  });

  it('reads a saved config by id', () => {
    const p = resolver().resolve({ 'x-gateway-config': 'fallback-1' }) as StrategyNode;
    expect(p.kind).toBe('fallback');
    expect(p.children.map((c) => (c as TargetNode).target.provider)).toEqual(['openai', 'groq']);
    expect(target(resolver().resolve({ 'x-gateway-config': ' single ' })).target.api_key).toBe('sk-fake-saved');
  });

  it('answers 404 config_not_found for an unknown id', () => {
    const e = resolveError({ 'x-gateway-config': 'nope' });
    expect(e.code).toBe('config_not_found');
    expect(e.status).toBe(404);
    expect(e.param).toBe('x-gateway-config');
    expect(e.message).toContain('"nope"');
  });

  it.each(['{"provider":', '{provider: "openai"}', "{'a':1}"])('answers 400 invalid_header for invalid JSON %j', (raw) => {
    const e = resolveError({ 'x-gateway-config': raw });
    expect(e.code).toBe('invalid_header');
    expect(e.status).toBe(400);
    expect(e.param).toBe('x-gateway-config');
  });

  it('answers invalid_config with the path for a config that fails the schema', () => {
    const e = resolveError({ 'x-gateway-config': '{"provider":"openai","api_key":"k","retry":{"attempts":"3"}}' });
    expect(e.code).toBe('invalid_config');
    expect(e.param).toBe('config.retry.attempts');
  });

  it('answers missing_provider when there is neither a config nor loose headers', () => {
    expect(resolveError({}).code).toBe('missing_provider');
    expect(resolveError({ authorization: 'Bearer sk-fake' }).code).toBe('missing_provider');
  });

  it('builds a config from loose headers alone', () => {
    const p = target(
      resolver().resolve({
        'x-gateway-provider': 'openai',
        'x-gateway-request-timeout': '1500',
        'x-gateway-forward-headers': 'x-tenant',
        authorization: 'Bearer sk-fake-bearer',
      }),
    );
    expect(p.target).toEqual({ provider: 'openai', api_key: 'sk-fake-bearer' });
    expect(p.settings).toEqual({ request_timeout: 1500, forward_headers: ['x-tenant'] });
  });

  it('lets loose headers fill the root, the config winning where it sets a field', () => {
    const p = target(
      resolver().resolve({
        'x-gateway-config': '{"provider":"groq","api_key":"sk-fake-cfg","request_timeout":9000}',
        'x-gateway-provider': 'openai',
        'x-gateway-request-timeout': '1000',
        'x-gateway-vendor-organization': 'org-from-header',
      }),
    );
    expect(p.target).toEqual({ provider: 'groq', api_key: 'sk-fake-cfg', vendor_organization: 'org-from-header' });
    expect(p.settings.request_timeout).toBe(9000);
  });

  it('lets loose headers fill the root of a saved config', () => {
    const p = resolver().resolve({ 'x-gateway-config': 'fallback-1', 'x-gateway-request-timeout': '700' }) as StrategyNode;
    expect(p.settings.request_timeout).toBe(700);
    expect(p.children.every((c) => c.settings.request_timeout === 700)).toBe(true);
  });

  it('uses the bearer token as api_key only when a provider is named and there is no credential', () => {
    const r = resolver();
    expect(target(r.resolve({ 'x-gateway-provider': 'openai', authorization: 'Bearer sk-fake-b' })).target.api_key).toBe('sk-fake-b');
    expect(target(r.resolve({ 'x-gateway-config': '{"provider":"openai"}', authorization: 'Bearer sk-fake-b2' })).target.api_key).toBe(
      'sk-fake-b2',
    );
    // a credential in the config wins
    expect(
      target(r.resolve({ 'x-gateway-config': '{"provider":"openai","api_key":"sk-fake-own"}', authorization: 'Bearer sk-fake-b' })).target
        .api_key,
    ).toBe('sk-fake-own');
    // a virtual key is a credential
    expect(target(r.resolve({ 'x-gateway-virtual-key': 'vk-main', authorization: 'Bearer sk-fake-b' })).target.api_key).toBe('sk-fake-vk');
    expect(
      target(r.resolve({ 'x-gateway-provider': 'openai', 'x-gateway-virtual-key': 'vk-main', authorization: 'Bearer sk-fake-b' })).target
        .api_key,
    ).toBe('sk-fake-vk');
  });

  it('does not push the bearer token into a config that names no provider', () => {
    const p = resolver().resolve({ 'x-gateway-config': 'fallback-1', authorization: 'Bearer sk-fake-b' }) as StrategyNode;
    expect(p.children.map((c) => (c as TargetNode).target.api_key)).toEqual(['sk-fake-saved-a', 'sk-fake-saved-b']);
    expect(JSON.stringify(p)).not.toContain('sk-fake-b"');
  });

  it('a provider named without any credential fails, saying the credential is missing', () => {
    const e = resolveError({ 'x-gateway-provider': 'openai' });
    expect(e.code).toBe('missing_provider_credential');
    expect(e.param).toBe('authorization');
  });

  it('passes loose header errors on as invalid_header', () => {
    const e = resolveError({ 'x-gateway-provider': 'openai', 'x-gateway-request-timeout': 'soon' });
    expect(e.code).toBe('invalid_header');
    expect(e.param).toBe('x-gateway-request-timeout');
  });

  describe('plan cache', () => {
    const h1: Headers = { 'x-gateway-config': '{"provider":"openai","api_key":"sk-fake-1"}' };
    const h2: Headers = { 'x-gateway-config': 'single' };
    const h3: Headers = { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-fake-3' };

    it('returns the identical plan for identical headers', () => {
      const r = resolver();
      const a = r.resolve(h1);
      expect(r.resolve({ ...h1 })).toBe(a);
      expect(r.cachedPlans).toBe(1);
    });

    it('keys on the bearer token too (different credentials, different plans)', () => {
      const r = resolver();
      const a = r.resolve({ 'x-gateway-provider': 'openai', authorization: 'Bearer sk-fake-x' });
      const b = r.resolve({ 'x-gateway-provider': 'openai', authorization: 'Bearer sk-fake-y' });
      expect(a).not.toBe(b);
      expect(target(b).target.api_key).toBe('sk-fake-y');
      expect(r.cachedPlans).toBe(2);
    });

    it('ignores headers that do not shape the plan', () => {
      const r = resolver();
      const a = r.resolve(h1);
      expect(r.resolve({ ...h1, 'x-gateway-trace-id': 'other', 'user-agent': 'x' })).toBe(a);
    });

    it('stays bounded, evicting the least recently used plan', () => {
      const r = resolver(2);
      const a = r.resolve(h1);
      const b = r.resolve(h2);
      expect(r.cachedPlans).toBe(2);
      expect(r.resolve(h1)).toBe(a); // h1 is now the most recent; h2 the least
      r.resolve(h3); // evicts h2
      expect(r.cachedPlans).toBe(2);
      expect(r.resolve(h1)).toBe(a);
      const b2 = r.resolve(h2);
      expect(b2).not.toBe(b);
      expect(b2).toEqual(b);
      expect(r.cachedPlans).toBe(2);
      for (let i = 0; i < 20; i++) r.resolve({ 'x-gateway-config': `{"provider":"openai","api_key":"sk-fake-${i}"}` });
      expect(r.cachedPlans).toBe(2);
    });

    it('tells an empty x-gateway-config from none (the empty one is still refused)', () => {
      const r = resolver();
      r.resolve(h3);
      expect(resolveError({ ...h3, 'x-gateway-config': '' }, r).code).toBe('invalid_header');
    });

    it('serves a repeated request from the last plan, and misses it when any plan-shaping header differs', () => {
      const r = resolver();
      const a = r.resolve(h3);
      expect(r.resolve({ ...h3 })).toBe(a);
      // a loose header the last request did not send
      const timed = r.resolve({ ...h3, 'x-gateway-request-timeout': '5000' });
      expect(timed).not.toBe(a);
      expect(timed.settings.request_timeout).toBe(5000);
      // the same config with another credential
      const other = r.resolve({ ...h3, authorization: 'Bearer sk-fake-other' });
      expect(target(other).target.api_key).toBe('sk-fake-other');
      // back to the first: the cached plan again, not a copy
      expect(r.resolve({ ...h3 })).toBe(a);
      expect(r.cachedPlans).toBe(3);
    });

    it('does not cache failures', () => {
      const r = resolver();
      resolveError({ 'x-gateway-config': 'nope' }, r);
      resolveError({ 'x-gateway-config': 'nope' }, r);
      expect(r.cachedPlans).toBe(0);
    });
  });

  describe('plan cache and store writes', () => {
    /** A resolver over stores of its own, so that writes stay in the test. */
    function withStores() {
      const keys = new MemoryVersionedStore<VirtualKey>([
        ['vk-a', { provider: 'openai', api_key: 'sk-fake-a-1' }],
        ['vk-other', { provider: 'openai', api_key: 'sk-fake-other' }],
      ]);
      const configs = new MemoryVersionedStore<Config>([
        ['saved', parseConfig({ provider: 'openai', api_key: 'sk-fake-saved-1' })],
        ['via-key', parseConfig({ virtual_key: 'vk-a' })],
        ['unrelated', parseConfig({ provider: 'groq', api_key: 'sk-fake-groq' })],
      ]);
      return { keys, configs, r: new ConfigResolver({ ...deps, virtualKeys: keys }, configs) };
    }

    it('serves the cached plan while the stores are unchanged', () => {
      const { r } = withStores();
      const a = r.resolve({ 'x-gateway-config': 'via-key' });
      expect(r.resolve({ 'x-gateway-config': 'via-key' })).toBe(a);
      expect(r.cachedPlans).toBe(1);
    });

    it('uses an edited saved config on the next request', async () => {
      const { configs, r } = withStores();
      expect(target(r.resolve({ 'x-gateway-config': 'saved' })).target.api_key).toBe('sk-fake-saved-1');
      await configs.put('saved', parseConfig({ provider: 'groq', api_key: 'sk-fake-saved-2' }));
      expect(target(r.resolve({ 'x-gateway-config': 'saved' })).target).toEqual({ provider: 'groq', api_key: 'sk-fake-saved-2' });
      expect(r.cachedPlans).toBe(1); // the stale entry was replaced, not added beside
    });

    it('answers config_not_found once a saved config is deleted', async () => {
      const { configs, r } = withStores();
      r.resolve({ 'x-gateway-config': 'saved' });
      await configs.delete('saved');
      expect(resolveError({ 'x-gateway-config': 'saved' }, r).code).toBe('config_not_found');
    });

    it('uses a rotated virtual key on the next request, whether named by header, inline config or saved config', async () => {
      const { keys, r } = withStores();
      const ways: Headers[] = [
        { 'x-gateway-virtual-key': 'vk-a' },
        { 'x-gateway-config': '{"strategy":{"mode":"fallback"},"targets":[{"virtual_key":"vk-other"},{"virtual_key":"vk-a"}]}' },
        { 'x-gateway-config': 'via-key' },
      ];
      const keyOf = (h: Headers): string | undefined => {
        const p = r.resolve(h);
        return p.kind === 'target' ? p.target.api_key : target((p as StrategyNode).children[1]).target.api_key;
      };
      for (const h of ways) expect(keyOf(h)).toBe('sk-fake-a-1');
      await keys.put('vk-a', { provider: 'openai', api_key: 'sk-fake-a-2' });
      for (const h of ways) expect(keyOf(h)).toBe('sk-fake-a-2');
    });

    it('answers virtual_key_not_found once the virtual key is deleted', async () => {
      const { keys, r } = withStores();
      r.resolve({ 'x-gateway-config': 'via-key' });
      await keys.delete('vk-a');
      expect(resolveError({ 'x-gateway-config': 'via-key' }, r).code).toBe('virtual_key_not_found');
      await keys.put('vk-a', { provider: 'groq', api_key: 'sk-fake-a-3' });
      expect(target(r.resolve({ 'x-gateway-config': 'via-key' })).target).toEqual({ provider: 'groq', api_key: 'sk-fake-a-3' });
    });

    it('notices a virtual key that appears under an @slug that named a provider', async () => {
      const { keys, r } = withStores();
      const h: Headers = { 'x-gateway-config': '{"provider":"@openai","api_key":"sk-fake-direct"}' };
      expect(target(r.resolve(h)).target.provider).toBe('openai');
      await keys.put('openai', { provider: 'groq' });
      expect(target(r.resolve(h)).target).toEqual({ provider: 'groq', api_key: 'sk-fake-direct' });
    });

    it('keeps the plans that did not read what was written', async () => {
      const { keys, configs, r } = withStores();
      const a = r.resolve({ 'x-gateway-config': 'via-key' });
      const b = r.resolve({ 'x-gateway-config': 'saved' });
      await keys.put('vk-other', { provider: 'openai', api_key: 'sk-fake-other-2' });
      await configs.put('unrelated', parseConfig({ provider: 'groq', api_key: 'sk-fake-groq-2' }));
      await configs.put('new-one', parseConfig({ provider: 'groq', api_key: 'sk-fake-groq-3' }));
      expect(r.resolve({ 'x-gateway-config': 'via-key' })).toBe(a);
      expect(r.resolve({ 'x-gateway-config': 'saved' })).toBe(b);
    });

    it('tells a put-back entry from the one that was there (versions are never reused)', async () => {
      const { keys, r } = withStores();
      const a = r.resolve({ 'x-gateway-virtual-key': 'vk-a' });
      await keys.delete('vk-a');
      await keys.put('vk-a', { provider: 'openai', api_key: 'sk-fake-a-1' });
      const b = r.resolve({ 'x-gateway-virtual-key': 'vk-a' });
      expect(b).not.toBe(a); // rebuilt (the same content, but it could have differed)
      expect(b).toEqual(a);
      expect(r.resolve({ 'x-gateway-virtual-key': 'vk-a' })).toBe(b);
    });
  });

  describe('a workspace\'s virtual keys serve only that workspace', () => {
    function scoped() {
      const keys = new MemoryVirtualKeyStore({ 'vk-shared': { provider: 'openai', api_key: 'sk-fake-shared' } });
      const made = (id: string, owner: { workspace_id?: string; organisation_id?: string }) => ({
        id,
        key: { provider: 'openai', api_key: `sk-fake-${id}` },
        ...owner,
        made: { created_at: '2025-05-01T00:00:00.000Z', last_updated_at: '2025-05-01T00:00:00.000Z', version_id: id },
      });
      void keys.create(made('vk-ws-a', { workspace_id: 'ws-a', organisation_id: 'org-1' }));
      void keys.create(made('openai', { workspace_id: 'ws-a', organisation_id: 'org-1' }));
      void keys.create(made('vk-org', { organisation_id: 'org-1' }));
      // the same ids in org-2's workspace ws-a (another workspace) and in ws-a of no organisation
      void keys.create({ ...made('vk-ws-a', { workspace_id: 'ws-a', organisation_id: 'org-2' }), key: { provider: 'openai', api_key: 'sk-fake-org-2' } });
      void keys.create({ ...made('vk-ws-a', { workspace_id: 'ws-a' }), key: { provider: 'openai', api_key: 'sk-fake-no-org' } });
      return new ConfigResolver({ ...deps, virtualKeys: keys }, new MemoryVersionedStore<Config>());
    }
    const A = { workspace_id: 'ws-a', organisation_id: 'org-1' };
    const B = { workspace_id: 'ws-b', organisation_id: 'org-1' };
    const A2 = { workspace_id: 'ws-a', organisation_id: 'org-2' };

    it('an id names a key in the caller\'s own (organisation, workspace): the same workspace id in another organisation, or in none, is another workspace', () => {
      const r = scoped();
      const h = { 'x-gateway-virtual-key': 'vk-ws-a' };
      expect(target(r.resolve(h, A)).target.api_key).toBe('sk-fake-vk-ws-a');
      expect(target(r.resolve(h, A2)).target.api_key).toBe('sk-fake-org-2');
      expect(target(r.resolve(h, { workspace_id: 'ws-a' })).target.api_key).toBe('sk-fake-no-org');
      expect(target(r.resolve(h, A)).target.api_key).toBe('sk-fake-vk-ws-a');
      // org-1's organisation-wide key does not serve org-2's workspaces
      expect(thrownBy(GatewayError, () => r.resolve({ 'x-gateway-virtual-key': 'vk-org' }, A2)).code).toBe('virtual_key_not_found');
    });

    it('its own workspace uses it; another gets 404, even right after a cached plan for the first', () => {
      const r = scoped();
      const h = { 'x-gateway-virtual-key': 'vk-ws-a' };
      expect(target(r.resolve(h, A)).target.api_key).toBe('sk-fake-vk-ws-a');
      expect(target(r.resolve(h, A)).target.api_key).toBe('sk-fake-vk-ws-a');
      for (const caller of [B, undefined, { organisation_id: 'org-1' }]) {
        const e = thrownBy(GatewayError, () => r.resolve(h, caller));
        expect(e.code).toBe('virtual_key_not_found');
      }
      expect(target(r.resolve(h, A)).target.api_key).toBe('sk-fake-vk-ws-a');
      // the same for a config naming it
      expect(thrownBy(GatewayError, () => r.resolve({ 'x-gateway-config': '{"virtual_key":"vk-ws-a"}' }, B)).code).toBe('virtual_key_not_found');
    });

    it('an organisation\'s key serves its organisation; the bootstrap file\'s serves everyone', () => {
      const r = scoped();
      expect(target(r.resolve({ 'x-gateway-virtual-key': 'vk-org' }, B)).target.api_key).toBe('sk-fake-vk-org');
      expect(thrownBy(GatewayError, () => r.resolve({ 'x-gateway-virtual-key': 'vk-org' }, { workspace_id: 'ws-x' })).code).toBe('virtual_key_not_found');
      for (const caller of [A, B, undefined]) expect(target(r.resolve({ 'x-gateway-virtual-key': 'vk-shared' }, caller)).target.api_key).toBe('sk-fake-shared');
    });

    it('two workspaces sending the same config each keep their own cached plan (taking turns rebuilds nothing)', () => {
      const r = scoped();
      const h = { 'x-gateway-virtual-key': 'vk-org' };
      const a = r.resolve(h, A);
      const b = r.resolve(h, B);
      expect(b).not.toBe(a);
      for (let i = 0; i < 3; i++) {
        expect(r.resolve(h, A)).toBe(a);
        expect(r.resolve(h, B)).toBe(b);
      }
      expect(r.cachedPlans).toBe(2);
    });

    it('a saved config edited to name a workspace\'s key: the stale plan is dropped and each workspace\'s plan stays cached', async () => {
      const keys = new MemoryVirtualKeyStore({});
      void keys.create({ id: 'vk-org', key: { provider: 'openai', api_key: 'sk-fake-vk-org' }, organisation_id: 'org-1', made: { created_at: '', last_updated_at: '', version_id: 'v' } });
      const configs = new MemoryVersionedStore<Config>([['cfg', { provider: 'openai', api_key: 'sk-fake-plain' } as Config]]);
      const r = new ConfigResolver({ ...deps, virtualKeys: keys }, configs);
      const h = { 'x-gateway-config': 'cfg' };
      expect(target(r.resolve(h, A)).target.api_key).toBe('sk-fake-plain');
      await configs.put('cfg', { virtual_key: 'vk-org' } as Config);
      const a = r.resolve(h, A);
      const b = r.resolve(h, B);
      expect(target(a).target.api_key).toBe('sk-fake-vk-org');
      for (let i = 0; i < 3; i++) {
        expect(r.resolve(h, A)).toBe(a);
        expect(r.resolve(h, B)).toBe(b);
      }
      expect(r.cachedPlans).toBe(2);
    });

    it('`@id` naming another workspace\'s key is taken as a provider name, as if the key did not exist', () => {
      const r = scoped();
      const h = { 'x-gateway-provider': '@openai' };
      expect(target(r.resolve(h, A)).target.api_key).toBe('sk-fake-openai');
      // for B there is no such key: `@openai` is the provider, with no stored credential
      expect(target(r.resolve(h, B)).target).toEqual({ provider: 'openai' });
      expect(target(r.resolve({ ...h, authorization: 'Bearer sk-fake-bearer' }, B)).target).toEqual({ provider: 'openai', api_key: 'sk-fake-bearer' });
      expect(target(r.resolve(h, A)).target.api_key).toBe('sk-fake-openai');
    });
  });
});
