/**
 * The destination rule at the plan builder: which fields are destinations (one table, derived from
 * the provider field groups), what a key that opts in lets through, and what the refusal says.
 * The HTTP-level attack matrix is test/security/key-destination.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { BootstrapSchema, type VirtualKey } from '../../src/config/bootstrap.js';
import { PROVIDER_FIELD_NAMES } from '../../src/config/provider-fields.js';
import { parseConfig } from '../../src/config/schema.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { buildPlan, type PlanDeps } from '../../src/plan/build-plan.js';
import type { StrategyNode, TargetNode } from '../../src/plan/types.js';
import { defaultProviders, ProviderRegistry } from '../../src/providers/registry.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { MasterKey } from '../../src/security/master-key.js';
import { openRecord, sealRecord } from '../../src/state/redis/virtual-key-seal.js';
import { MemoryVersionedStore } from '../../src/state/memory/versioned-store.js';
import { thrownBy } from '../helpers/throws.js';

const OWNER_HOST = 'https://owner-llm.example.com/v1';
const SA = { client_email: 'sa@owner.iam.gserviceaccount.com', private_key: 'owner-private-key-pem', token_uri: 'https://owner-token.example.com/token' };

const virtualKeys = new MemoryVersionedStore<VirtualKey>([
  ['vk-openai', { provider: 'openai', api_key: 'sk-owner-secret', custom_host: OWNER_HOST }],
  ['vk-openai-open', { provider: 'openai', api_key: 'sk-owner-secret', custom_host: OWNER_HOST, allow_client_destination: true }],
  ['vk-openai-host', { provider: 'openai', api_key: 'sk-owner-secret', allow_client_destination: ['custom_host'] }],
  ['vk-azure', { provider: 'azure-openai', api_key: 'azure-secret', resource_name: 'owner-resource', deployment_id: 'owner-dep' }],
  ['vk-vertex', { provider: 'vertex-ai', cloud_c_region: 'us-central1', cloud_c_project_id: 'owner-project', cloud_c_service_account_json: SA }],
  ['vk-vertex-open', { provider: 'vertex-ai', cloud_c_service_account_json: SA, allow_client_destination: ['cloud_c_region', 'cloud_c_project_id'] }],
  ['vk-bad-allow', { provider: 'openai', api_key: 'sk-owner-secret', allow_client_destination: ['cloud_b_region'] }],
]);

const deps: PlanDeps = { virtualKeys, registry: new ProviderRegistry(defaultProviders()), hostGuard: new HostGuard({ trusted: [] }) };

const plan = (config: unknown, headerFields?: Map<string, string>) => buildPlan(parseConfig(config), deps, 'config', headerFields);

const planError = (config: unknown, headerFields?: Map<string, string>): GatewayError => thrownBy(GatewayError, () => plan(config, headerFields));

describe('destination fields', () => {
  it('are, per provider, the fields that pick its host, path, account or token endpoint (a new field or provider must be decided here)', () => {
    const table: Record<string, readonly string[]> = {};
    for (const id of deps.registry.ids()) table[id] = deps.registry.get(id).descriptor.fields.destinations;
    const vendor = ['custom_host', 'vendor_organization', 'vendor_project'];
    for (const [id, d] of Object.entries(table)) if (!['anthropic', 'azure-openai', 'azure-ai', 'bedrock', 'vertex-ai'].includes(id)) expect(d, id).toEqual(vendor);
    expect(table.anthropic).toEqual(['custom_host']);
    expect(table['azure-openai']).toEqual(['custom_host', 'resource_name', 'deployment_id', 'deployments']);
    expect(table['azure-ai']).toEqual(['custom_host', 'cloud_a_region', 'cloud_a_deployment_name', 'cloud_a_deployment_type', 'cloud_a_endpoint_name']);
    expect(table.bedrock).toEqual(['custom_host', 'cloud_b_region']);
    expect(table['vertex-ai']).toEqual(['custom_host', 'cloud_c_project_id', 'cloud_c_region', 'cloud_c_service_account_json']);
    // What is left is credentials and fields that change nothing about where a request goes.
    const all = new Set(Object.values(table).flat());
    expect(PROVIDER_FIELD_NAMES.filter((f) => !all.has(f))).toEqual([
      'api_key',
      'api_version',
      'model_name',
      'cloud_a_api_version',
      'cloud_b_access_key_id',
      'cloud_b_secret_access_key',
      'cloud_b_session_token',
    ]);
  });
});

describe('a request beside a virtual key', () => {
  it('is refused naming the header that set the field, and the message holds none of the key\'s values', () => {
    const e = planError({ virtual_key: 'vk-openai', custom_host: 'https://elsewhere.example.com/v1' }, new Map([['custom_host', 'x-gateway-custom-host']]));
    expect(e.code).toBe('virtual_key_destination_fixed');
    expect(e.status).toBe(400);
    expect(e.param).toBe('x-gateway-custom-host');
    expect(e.message).toContain('vk-openai');
    expect(e.message).toContain('allow_client_destination');
    for (const v of [OWNER_HOST, 'sk-owner-secret']) expect(e.message).not.toContain(v);
  });

  it('is refused even when it repeats the key\'s own value (no oracle for the key\'s fields)', () => {
    expect(planError({ virtual_key: 'vk-azure', resource_name: 'owner-resource' }).param).toBe('config.resource_name');
  });

  it('names the strategy level an inherited custom_host came from', () => {
    const e = planError({ strategy: { mode: 'fallback' }, targets: [{ strategy: { mode: 'fallback' }, custom_host: 'https://mid.example.com/v1', targets: [{ virtual_key: 'vk-openai' }] }] });
    expect(e.param).toBe('config.targets[0].custom_host');
    expect(e.message).toContain('inherited by config.targets[0].targets[0]');
  });

  it('may name the key\'s own provider (by an alias too), never another', () => {
    expect((plan({ virtual_key: 'vk-azure', provider: 'azure' }) as TargetNode).target.provider).toBe('azure-openai');
    const e = planError({ virtual_key: 'vk-azure', provider: 'openai' }, new Map([['provider', 'x-gateway-provider']]));
    expect(e).toMatchObject({ code: 'virtual_key_destination_fixed', param: 'x-gateway-provider' });
  });

  it('may set what a key lets clients choose, and the client\'s value is the one used (own > inherited > the key\'s)', () => {
    const own = plan({ virtual_key: 'vk-openai-open', custom_host: 'https://client.example.com/v1', vendor_project: 'proj-client' }) as TargetNode;
    expect(own.target).toMatchObject({ custom_host: 'https://client.example.com/v1', vendor_project: 'proj-client', api_key: 'sk-owner-secret' });
    const inherited = plan({ strategy: { mode: 'fallback' }, custom_host: 'https://inherited.example.com/v1', targets: [{ virtual_key: 'vk-openai-host' }] }) as StrategyNode;
    expect((inherited.children[0] as TargetNode).target.custom_host).toBe('https://inherited.example.com/v1');
    // vk-openai-host lists custom_host only.
    expect(planError({ virtual_key: 'vk-openai-host', vendor_organization: 'org-client' }).param).toBe('config.vendor_organization');
    const vertex = plan({ virtual_key: 'vk-vertex-open', cloud_c_region: 'europe-west4', cloud_c_project_id: 'client-project' }) as TargetNode;
    expect(vertex.target.extra).toMatchObject({ cloud_c_region: 'europe-west4', cloud_c_project_id: 'client-project', cloud_c_service_account_json: SA });
    expect(planError({ virtual_key: 'vk-vertex-open', cloud_c_service_account_json: { ...SA, token_uri: 'https://elsewhere.example.com/token' } }).param).toBe(
      'config.cloud_c_service_account_json',
    );
  });

  it('leaves requests without a virtual key as they were: their own fields are theirs to choose', () => {
    const t = plan({ provider: 'vertex-ai', api_key: 'ya29.client-token', cloud_c_region: 'us-east4', cloud_c_project_id: 'p', custom_host: 'https://client.example.com' }) as TargetNode;
    expect(t.target.custom_host).toBe('https://client.example.com');
  });
});

describe('allow_client_destination', () => {
  it('naming a field that is not a destination of the key\'s provider is a 400 at the key\'s bootstrap path', () => {
    const e = planError({ virtual_key: 'vk-bad-allow' });
    expect(e).toMatchObject({ code: 'invalid_config', param: 'virtual_keys.vk-bad-allow.allow_client_destination' });
    expect(e.message).toContain('cloud_b_region');
  });

  it('is validated by the bootstrap schema: true, false, or a list of destination fields', () => {
    const key = (allow: unknown) => BootstrapSchema.safeParse({ virtual_keys: { k: { provider: 'openai', api_key: 'x', allow_client_destination: allow } } });
    expect(key(true).success).toBe(true);
    expect(key(false).success).toBe(true);
    expect(key(['custom_host', 'cloud_b_region']).success).toBe(true);
    for (const bad of [['api_key'], ['model_name'], 'custom_host', 1]) {
      const r = key(bad);
      expect(r.success, JSON.stringify(bad)).toBe(false);
      expect(r.error!.issues[0]!.path.slice(0, 3)).toEqual(['virtual_keys', 'k', 'allow_client_destination']);
    }
  });

  it('survives the stored form (Redis): kept beside the non-secret fields, not sealed', () => {
    const master = MasterKey.generate();
    const made = { at: '2025-01-01T00:00:00.000Z' };
    const record = {
      id: 'vk-stored',
      key: { provider: 'bedrock', api_key: 'br-secret', cloud_b_region: 'eu-west-3', allow_client_destination: ['cloud_b_region'] } as VirtualKey,
      made: { created_at: made.at, last_updated_at: made.at, version_id: 'v1' },
    };
    const stored = sealRecord(record, master.key);
    expect(stored.fields).toEqual({ cloud_b_region: 'eu-west-3', allow_client_destination: ['cloud_b_region'] });
    expect(openRecord('vk-stored', JSON.stringify(stored), master.key).key).toEqual(record.key);
  });
});
