import { describe, expect, it } from 'vitest';
import {
  FIELD_GROUP_NAMES,
  FIELD_GROUPS,
  fieldsNotAccepted,
  PROVIDER_FIELD_HEADERS,
  PROVIDER_FIELD_NAMES,
  providerFields,
  redactText,
  SECRET_FIELDS,
  secretValues,
} from '../../src/config/provider-fields.js';
import { REQUIRED_KEY_SETS, ConfigSchema } from '../../src/config/schema.js';
import { VirtualKeySchema } from '../../src/config/bootstrap.js';
import { CONFIG_HEADERS } from '../../src/config/headers.js';
import { defaultProviders } from '../../src/providers/registry.js';

describe('provider field groups', () => {
  it('name each field in exactly one group', () => {
    const all = FIELD_GROUP_NAMES.flatMap((g) => Object.keys(FIELD_GROUPS[g].fields));
    expect(new Set(all).size).toBe(all.length);
    expect([...all].sort()).toEqual([...PROVIDER_FIELD_NAMES].sort());
  });

  it('are what the config schema and virtual keys accept, every one of them', () => {
    for (const f of PROVIDER_FIELD_NAMES) {
      expect(ConfigSchema.shape).toHaveProperty(f);
      expect(VirtualKeySchema.shape).toHaveProperty(f);
    }
  });

  it('mark the credentials secret and nothing else', () => {
    expect([...SECRET_FIELDS].sort()).toEqual([
      'api_key',
      'cloud_b_access_key_id',
      'cloud_b_secret_access_key',
      'cloud_b_session_token',
      'cloud_c_service_account_json',
    ]);
  });

  it('give the header table its provider rows', () => {
    for (const [header, field] of PROVIDER_FIELD_HEADERS) {
      expect(CONFIG_HEADERS.find(([h]) => h === header)?.[1]).toBe(field);
    }
    expect(PROVIDER_FIELD_HEADERS).toContainEqual(['x-gateway-cloud-b-session-token', 'cloud_b_session_token']);
  });

  it('give the required-key sets that name provider fields, each with provider', () => {
    const fromGroups = FIELD_GROUP_NAMES.flatMap((g) =>
      ((FIELD_GROUPS[g] as { keySets?: string[][] }).keySets ?? []).map((s) => ['provider', ...s].join('+')),
    );
    const providerSets = REQUIRED_KEY_SETS.filter((s) => s.some((k) => (PROVIDER_FIELD_NAMES as string[]).includes(k))).map((s) => s.join('+'));
    expect(providerSets.sort()).toEqual(fromGroups.sort());
  });
});

describe('a descriptor\'s fields', () => {
  it('every shipped OpenAI-compatible descriptor accepts its key, custom_host and the vendor fields; its schema is strict', () => {
    for (const p of defaultProviders().filter((x) => x.descriptor.fields.groups.includes('vendor'))) {
      const f = p.descriptor.fields;
      expect(f.groups).toEqual(['api_key', 'custom_host', 'vendor']);
      expect(f.schema.safeParse({ api_key: 'k', vendor_project: 'p' }).success).toBe(true);
      expect(f.schema.safeParse({ cloud_b_region: 'us-east-1' }).success).toBe(false);
    }
  });

  it('fieldsNotAccepted names the provider fields a descriptor does not use, and only those', () => {
    const f = providerFields('api_key', 'custom_host');
    expect(fieldsNotAccepted(f, { provider: 'x', api_key: 'k', retry: { attempts: 1 }, cloud_b_region: 'r', deployment_id: 'd' })).toEqual([
      'deployment_id',
      'cloud_b_region',
    ]);
    expect(fieldsNotAccepted(providerFields('api_key', 'cloud_b'), { api_key: 'k', cloud_b_region: 'r' })).toEqual([]);
  });
});

describe('secretValues / redactText', () => {
  it('collect the secret strings, with a secret object\'s inner strings in raw and JSON-escaped form', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n';
    const values = secretValues({
      api_key: 'sk-1',
      cloud_b_region: 'us-east-1',
      cloud_b_session_token: 'tok-123456',
      cloud_c_service_account_json: { type: 'service_account', private_key: pem },
    });
    expect(values).toContain('sk-1');
    expect(values).toContain('tok-123456');
    expect(values).toContain(pem);
    expect(values).toContain(JSON.stringify(pem).slice(1, -1));
    expect(values).not.toContain('us-east-1');
    const echoed = JSON.stringify({ error: { message: `bad key ${pem} for sk-1 and tok-123456` } });
    const out = redactText(echoed, values);
    expect(out).not.toContain('AAAA');
    expect(out).not.toContain('sk-1');
    expect(out).not.toContain('tok-123456');
    expect(JSON.parse(out).error.message).toBe('bad key [redacted] for [redacted] and [redacted]');
  });
});
