import { describe, expect, it } from 'vitest';
import { CONFIG_HEADERS, bearerToken, configFromHeaders, headerValue, requestSettings, type Headers } from '../../src/config/headers.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { thrownBy } from '../helpers/throws.js';

const headerError = (fn: () => unknown): GatewayError => thrownBy(GatewayError, fn);

describe('CONFIG_HEADERS: each header sets its field', () => {
  const TEXT_ROWS: [header: string, field: string][] = [
    ['x-gateway-provider', 'provider'],
    ['x-gateway-virtual-key', 'virtual_key'],
    ['x-gateway-custom-host', 'custom_host'],
    ['x-gateway-vendor-organization', 'vendor_organization'],
    ['x-gateway-vendor-project', 'vendor_project'],
    ['x-gateway-cloud-a-resource-name', 'resource_name'],
    ['x-gateway-cloud-a-deployment-id', 'deployment_id'],
    ['x-gateway-cloud-a-api-version', 'api_version'],
    ['x-gateway-cloud-a-model-name', 'model_name'],
    ['x-gateway-cloud-b-access-key-id', 'cloud_b_access_key_id'],
    ['x-gateway-cloud-b-secret-access-key', 'cloud_b_secret_access_key'],
    ['x-gateway-cloud-b-session-token', 'cloud_b_session_token'],
    ['x-gateway-cloud-b-region', 'cloud_b_region'],
    ['x-gateway-cloud-c-project-id', 'cloud_c_project_id'],
    ['x-gateway-cloud-c-region', 'cloud_c_region'],
  ];

  it('lists every header of the table here, and the table has no duplicates', () => {
    const tested = new Set([...TEXT_ROWS.map(([h]) => h), 'x-gateway-request-timeout', 'x-gateway-forward-headers']);
    expect(new Set(CONFIG_HEADERS.map(([h]) => h))).toEqual(tested);
    expect(new Set(CONFIG_HEADERS.map(([h]) => h)).size).toBe(CONFIG_HEADERS.length);
    expect(new Set(CONFIG_HEADERS.map(([, f]) => f)).size).toBe(CONFIG_HEADERS.length);
  });

  /** Fields a host is built from take only their own form (a URL, a region name, a DNS label). */
  const VALUES: Record<string, string> = { custom_host: 'https://llm.example.com/v1', cloud_b_region: 'us-east-1', cloud_c_region: 'us-central1' };

  it.each(TEXT_ROWS)('%s → %s (trimmed)', (header, field) => {
    const v = VALUES[field] ?? 'value-1';
    expect(configFromHeaders({ [header]: `  ${v}  ` })).toEqual({ [field]: v });
  });

  it.each([
    ['x-gateway-cloud-b-region', 'x@127.0.0.1:9/#'],
    ['x-gateway-cloud-c-region', '2130706433'],
    ['x-gateway-cloud-a-resource-name', 'evil.example/x#'],
    ['x-gateway-custom-host', 'ftp://h/'],
  ])('%s refuses %s with a 400 naming the header', (header, value) => {
    const e = headerError(() => configFromHeaders({ [header]: value }));
    expect(e.code).toBe('invalid_header');
    expect(e.status).toBe(400);
    expect(e.param).toBe(header);
  });

  it.each(TEXT_ROWS)('%s refuses an empty value', (header) => {
    const e = headerError(() => configFromHeaders({ [header]: '   ' }));
    expect(e.code).toBe('invalid_header');
    expect(e.status).toBe(400);
    expect(e.param).toBe(header);
    expect(e.message).toContain(header);
    expect(e.issues?.[0]?.path[0]).toBe(header);
  });

  it('returns undefined when no config header is present, and ignores other headers', () => {
    expect(configFromHeaders({})).toBeUndefined();
    expect(configFromHeaders({ authorization: 'Bearer x', 'x-gateway-trace-id': 't', 'x-gateway-config': '{}' })).toBeUndefined();
  });

  it('reads several headers at once; an array value uses its first item', () => {
    expect(
      configFromHeaders({
        'x-gateway-provider': ['openai', 'groq'],
        'x-gateway-request-timeout': '2500',
        'x-gateway-forward-headers': 'x-a',
      }),
    ).toEqual({ provider: 'openai', request_timeout: 2500, forward_headers: ['x-a'] });
  });

  describe('x-gateway-request-timeout', () => {
    it.each([
      ['1', 1],
      [' 30000 ', 30000],
      ['86400000', 86_400_000],
    ])('%j → %i', (raw, ms) => {
      expect(configFromHeaders({ 'x-gateway-request-timeout': raw })).toEqual({ request_timeout: ms });
    });

    it.each(['0', '-1', '1.5', '10s', 'abc', '', '86400001', '1e3'])('refuses %j', (raw) => {
      const e = headerError(() => configFromHeaders({ 'x-gateway-request-timeout': raw }));
      expect(e.code).toBe('invalid_header');
      expect(e.param).toBe('x-gateway-request-timeout');
    });
  });

  describe('x-gateway-forward-headers', () => {
    it.each([
      ['x-tenant', ['x-tenant']],
      ['x-tenant, X-Trace-Id ,x-b', ['x-tenant', 'X-Trace-Id', 'x-b']],
      ['x-a,,x-b,', ['x-a', 'x-b']],
      ['["x-tenant","X-Other"]', ['x-tenant', 'X-Other']],
      ['  ["x-a"]  ', ['x-a']],
    ])('%j → %j', (raw, list) => {
      expect(configFromHeaders({ 'x-gateway-forward-headers': raw })).toEqual({ forward_headers: list });
    });

    it.each([
      ['x bad', 'is not a header name'],
      ['x-a, x:b', 'is not a header name'],
      ['["x-a", "bad header"]', 'is not a header name'],
      ['[1, 2]', ''],
      ['["x-a"', 'comma list or a JSON array'],
      ['[]', ''],
      [',', ''],
      ['{"a":1}', ''],
    ])('refuses %j', (raw, words) => {
      const e = headerError(() => configFromHeaders({ 'x-gateway-forward-headers': raw }));
      expect(e.code).toBe('invalid_header');
      expect(e.param).toBe('x-gateway-forward-headers');
      expect(e.message).toContain(words);
    });

    it('names the index of the bad item in the issue path', () => {
      const e = headerError(() => configFromHeaders({ 'x-gateway-forward-headers': 'x-a, x b' }));
      expect(e.issues?.[0]?.path).toEqual(['x-gateway-forward-headers', 1]);
    });
  });
});

describe('bearerToken and headerValue', () => {
  it.each<[Headers, string | undefined]>([
    [{ authorization: 'Bearer sk-fake' }, 'sk-fake'],
    [{ authorization: 'bearer   sk-fake  ' }, 'sk-fake'],
    [{ authorization: ['Bearer first', 'Bearer second'] }, 'first'],
    [{ authorization: 'Basic abc' }, undefined],
    [{ authorization: 'Bearer' }, undefined],
    [{ authorization: '' }, undefined],
    [{}, undefined],
  ])('%j → %j', (headers, token) => {
    expect(bearerToken(headers)).toBe(token);
  });

  it('headerValue takes the first of a repeated header', () => {
    expect(headerValue({ a: ['1', '2'] }, 'a')).toBe('1');
    expect(headerValue({ a: '1' }, 'a')).toBe('1');
    expect(headerValue({}, 'a')).toBeUndefined();
  });
});

describe('requestSettings', () => {
  it('is empty without headers', () => {
    expect(requestSettings({})).toEqual({});
  });

  it('reads every setting', () => {
    expect(
      requestSettings({
        'x-gateway-trace-id': 'trace-123',
        'x-gateway-metadata': '{"_user":"u1","tier":"pro","n":3,"ok":true,"none":null}',
        'x-gateway-cache-force-refresh': 'true',
        'x-gateway-cache-namespace': ' team-a ',
      }),
    ).toEqual({
      traceId: 'trace-123',
      metadata: { _user: 'u1', tier: 'pro', n: 3, ok: true, none: null },
      cacheForceRefresh: true,
      cacheNamespace: 'team-a',
    });
    expect(requestSettings({ 'x-gateway-cache-force-refresh': 'false' })).toEqual({ cacheForceRefresh: false });
  });

  describe('trace id', () => {
    it('accepts 128 printable characters', () => {
      const id = 'a'.repeat(127) + '~';
      expect(requestSettings({ 'x-gateway-trace-id': id }).traceId).toBe(id);
    });

    it.each([
      ['a'.repeat(129), 'at most 128'],
      ['', ''],
      ['has space', 'printable ASCII'],
      ['tab\there', 'printable ASCII'],
      ['ünïcode', 'printable ASCII'],
    ])('refuses %j', (id, words) => {
      const e = headerError(() => requestSettings({ 'x-gateway-trace-id': id }));
      expect(e.code).toBe('invalid_header');
      expect(e.param).toBe('x-gateway-trace-id');
      expect(e.message).toContain(words);
    });
  });

  describe('metadata', () => {
    it.each([
      ['not json', 'must be a JSON object'],
      ['[1,2]', ''],
      ['"text"', ''],
      ['42', ''],
      ['null', ''],
      ['{"nested":{"a":1}}', ''],
      ['{"list":[1]}', ''],
      [`{"long":"${'x'.repeat(1025)}"}`, ''],
      [`{"${'k'.repeat(129)}":"v"}`, ''],
      [`{"a":"${'x'.repeat(8200)}"}`, 'at most 8192'],
    ])('refuses %s', (raw, words) => {
      const e = headerError(() => requestSettings({ 'x-gateway-metadata': raw }));
      expect(e.code).toBe('invalid_header');
      expect(e.param).toBe('x-gateway-metadata');
      expect(e.message).toContain(words);
    });

    it('names the offending key in the issue path', () => {
      const e = headerError(() => requestSettings({ 'x-gateway-metadata': '{"ok":"v","bad":{"x":1}}' }));
      expect(e.issues?.[0]?.path).toEqual(['x-gateway-metadata', 'bad']);
    });

    it('accepts an empty object', () => {
      expect(requestSettings({ 'x-gateway-metadata': '{}' })).toEqual({ metadata: {} });
    });
  });

  it.each(['yes', '1', 'TRUE', ''])('refuses cache-force-refresh %j', (raw) => {
    expect(headerError(() => requestSettings({ 'x-gateway-cache-force-refresh': raw })).param).toBe('x-gateway-cache-force-refresh');
  });

  it('refuses a cache namespace over 256 characters or empty', () => {
    expect(requestSettings({ 'x-gateway-cache-namespace': 'n'.repeat(256) }).cacheNamespace).toHaveLength(256);
    expect(headerError(() => requestSettings({ 'x-gateway-cache-namespace': 'n'.repeat(257) })).param).toBe('x-gateway-cache-namespace');
    expect(headerError(() => requestSettings({ 'x-gateway-cache-namespace': ' ' })).param).toBe('x-gateway-cache-namespace');
  });
});
