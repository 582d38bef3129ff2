/**
 * Every x-gateway-cloud-* header fills the same field as the
 * config key (provider-fields.ts declares each field's header); the header other gateways define that sets no field is
 * refused, not ignored.
 */
import { describe, expect, it } from 'vitest';
import { configFromHeaders, refuseHeaders } from '../../src/config/headers.js';
import { fieldMeta, PROVIDER_FIELDS } from '../../src/config/provider-fields.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { ConfigResolver } from '../../src/plan/resolve.js';
import { ProviderRegistry, defaultProviders } from '../../src/providers/registry.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { thrownBy } from '../helpers/throws.js';
import { MemoryVersionedStore } from '../../src/state/memory/versioned-store.js';

/** The cloud headers and the config key each fills. */
const SPEC = [
  ['x-gateway-cloud-a-resource-name', 'resource_name'],
  ['x-gateway-cloud-a-deployment-id', 'deployment_id'],
  ['x-gateway-cloud-a-api-version', 'api_version'],
  ['x-gateway-cloud-a-model-name', 'model_name'], // the deployment's model (azure-openai)
  ['x-gateway-cloud-b-access-key-id', 'cloud_b_access_key_id'], // named like its siblings
  ['x-gateway-cloud-b-secret-access-key', 'cloud_b_secret_access_key'],
  ['x-gateway-cloud-b-region', 'cloud_b_region'],
  ['x-gateway-cloud-b-session-token', 'cloud_b_session_token'],
  ['x-gateway-cloud-c-project-id', 'cloud_c_project_id'],
  ['x-gateway-cloud-c-region', 'cloud_c_region'],
] as const;

describe('cloud headers', () => {
  it.each(SPEC)('%s fills %s', (header, field) => {
    expect(fieldMeta.get(PROVIDER_FIELDS[field])?.header).toBe(header);
    // Regions take only a region's form (the host is built from them).
    const v = ({ cloud_b_region: 'eu-west-1', cloud_c_region: 'europe-west4' } as Record<string, string>)[field] ?? 'value-1';
    expect(configFromHeaders({ [header]: `  ${v}  ` })).toEqual({ [field]: v });
  });

  it('every x-gateway-cloud-* header declared is one of this list', () => {
    const declared = Object.values(PROVIDER_FIELDS)
      .map((s) => fieldMeta.get(s)?.header)
      .filter((h): h is string => h?.startsWith('x-gateway-cloud-') === true);
    expect(declared.sort()).toEqual(SPEC.map(([h]) => h).sort());
  });

  it('an empty value is a 400 naming the header', () => {
    const e = thrownBy(GatewayError, () => configFromHeaders({ 'x-gateway-cloud-b-region': '  ' }));
    expect(e.code).toBe('invalid_header');
    expect(e.param).toBe('x-gateway-cloud-b-region');
  });

  it.each(['x-cloud-c-llm-request-type'])('%s sets no field: a 400 naming it, cached plan or not', (header) => {
    expect(thrownBy(GatewayError, () => refuseHeaders({ [header]: 'x' })).param).toBe(header);
    const resolver = new ConfigResolver({ virtualKeys: new MemoryVersionedStore(), registry: new ProviderRegistry(defaultProviders()), hostGuard: new HostGuard({ trusted: [] }) }, new MemoryVersionedStore());
    const headers = { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-fake' };
    resolver.resolve(headers); // the plan is now cached
    const e = thrownBy(GatewayError, () => resolver.resolve({ ...headers, [header]: 'gpt-4o' }));
    expect(e.code).toBe('invalid_header');
    expect(e.status).toBe(400);
    expect(e.param).toBe(header);
  });
});
