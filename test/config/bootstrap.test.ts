import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BootstrapError, interpolateEnv, loadBootstrap, parseBootstrap } from '../../src/config/bootstrap.js';
import { thrownBy } from '../helpers/throws.js';

const KEY_A = 'sk-gw-fake-aaaaaaaaaaaaaaaa';
const KEY_B = 'sk-gw-fake-bbbbbbbbbbbbbbbb';

const bootstrapError = (fn: () => unknown): BootstrapError => thrownBy(BootstrapError, fn);

describe('parseBootstrap', () => {
  it('parses a valid file', () => {
    const text = `
api_keys:
  - key: ${KEY_A}
    name: team-a
    workspace_id: ws-1
  - key: ${KEY_B}
    name: team-b
virtual_keys:
  openai-main:
    provider: openai
    api_key: sk-fake-provider
    vendor_organization: org-fake
  local.gpu_1:
    provider: ollama
    custom_host: http://gpu.example.com:11434/v1
provider_base_urls:
  openai: http://proxy.example.com/v1
`;
    expect(parseBootstrap(text, {})).toEqual({
      api_keys: [
        { key: KEY_A, name: 'team-a', workspace_id: 'ws-1' },
        { key: KEY_B, name: 'team-b' },
      ],
      virtual_keys: {
        'openai-main': { provider: 'openai', api_key: 'sk-fake-provider', vendor_organization: 'org-fake' },
        'local.gpu_1': { provider: 'ollama', custom_host: 'http://gpu.example.com:11434/v1' },
      },
      provider_base_urls: { openai: 'http://proxy.example.com/v1' },
    });
  });

  it('gives defaults for an empty file', () => {
    expect(parseBootstrap('', {})).toEqual({ api_keys: [], virtual_keys: {}, provider_base_urls: {} });
    expect(parseBootstrap('# only a comment\n', {})).toEqual({ api_keys: [], virtual_keys: {}, provider_base_urls: {} });
  });

  it('interpolates ${ENV} and ${ENV:-default}', () => {
    const text = `
api_keys:
  - key: \${GW_KEY}
    name: \${TEAM:-default-team}
virtual_keys:
  main:
    provider: openai
    api_key: "prefix-\${PROVIDER_KEY}-suffix"
    custom_host: \${HOST:-https://fallback.example.com/v1}
`;
    const b = parseBootstrap(text, { GW_KEY: KEY_A, PROVIDER_KEY: 'sk-fake-env' });
    expect(b.api_keys).toEqual([{ key: KEY_A, name: 'default-team' }]);
    expect(b.virtual_keys.main).toEqual({ provider: 'openai', api_key: 'prefix-sk-fake-env-suffix', custom_host: 'https://fallback.example.com/v1' });
    // a set variable wins over the default
    expect(parseBootstrap(text, { GW_KEY: KEY_A, PROVIDER_KEY: 'k', TEAM: 'team-x' }).api_keys[0]!.name).toBe('team-x');
  });

  it('treats an empty variable as unset and allows an empty default', () => {
    expect(interpolateEnv('a${X:-d}b', { X: '' })).toBe('adb');
    expect(interpolateEnv('a${X:-}b', {})).toBe('ab');
  });

  it('names the field whose variable is missing', () => {
    const text = `
virtual_keys:
  main:
    provider: openai
    api_key: \${OPENAI_KEY}
`;
    const e = bootstrapError(() => parseBootstrap(text, {}));
    expect(e.message).toContain('virtual_keys.main.api_key');
    expect(e.message).toContain('OPENAI_KEY');
    const inList = bootstrapError(() => parseBootstrap('api_keys:\n  - key: ${K}\n    name: n\n', {}));
    expect(inList.message).toContain('api_keys[0].key');
  });

  it('interpolates inside nested values and leaves non-strings alone', () => {
    expect(interpolateEnv({ a: ['${X}', 1, true, null], b: { c: '${Y:-y}' } }, { X: 'x' })).toEqual({ a: ['x', 1, true, null], b: { c: 'y' } });
  });

  it('rejects an unknown key, naming its path', () => {
    const top = bootstrapError(() => parseBootstrap('api_keyz: []\n', {}));
    expect(top.message).toMatch(/is invalid/);
    expect(top.message).toContain('api_keyz');
    const nested = bootstrapError(() => parseBootstrap(`virtual_keys:\n  main:\n    provider: openai\n    apikey: x\n`, {}));
    expect(nested.message).toContain('virtual_keys.main');
    expect(nested.message).toContain('apikey');
    const inKey = bootstrapError(() => parseBootstrap(`api_keys:\n  - key: ${KEY_A}\n    name: a\n    scope: admin\n`, {}));
    expect(inKey.message).toContain('api_keys[0]');
    expect(inKey.message).toContain('scope');
  });

  it('rejects invalid YAML', () => {
    const e = bootstrapError(() => parseBootstrap('api_keys: [\n  - key: x\n', {}, 'boot.yaml'));
    expect(e.message).toContain('boot.yaml: not valid YAML');
  });

  it('rejects a duplicate mapping key in the YAML', () => {
    const e = bootstrapError(() => parseBootstrap(`virtual_keys:\n  main:\n    provider: openai\n  main:\n    provider: groq\n`, {}));
    expect(e.message).toContain('not valid YAML');
  });

  it('rejects a duplicate gateway key, naming the second entry', () => {
    const e = bootstrapError(() =>
      parseBootstrap(`api_keys:\n  - key: ${KEY_A}\n    name: a\n  - key: ${KEY_B}\n    name: b\n  - key: ${KEY_A}\n    name: c\n`, {}),
    );
    expect(e.message).toContain('api_keys[2].key: duplicate key');
    // the message must not echo the key itself
    expect(e.message).not.toContain(KEY_A);
  });

  it('rejects a short gateway key', () => {
    const e = bootstrapError(() => parseBootstrap('api_keys:\n  - key: short\n    name: a\n', {}));
    expect(e.message).toContain('api_keys[0].key');
    expect(e.message).toContain('at least 16 characters');
  });

  it.each([
    ['a virtual key id with a space', 'virtual_keys:\n  "bad id":\n    provider: openai\n', 'virtual_keys'],
    ['a custom_host that is not http(s)', 'virtual_keys:\n  v:\n    provider: openai\n    custom_host: ftp://x.example\n', 'virtual_keys.v.custom_host'],
    ['a provider base URL that is not a URL', 'provider_base_urls:\n  openai: not-a-url\n', 'provider_base_urls.openai'],
    ['a missing name', `api_keys:\n  - key: ${KEY_A}\n`, 'api_keys[0].name'],
    ['a list where a map is expected', 'virtual_keys: []\n', 'virtual_keys'],
  ])('rejects %s', (_label, text, path) => {
    expect(bootstrapError(() => parseBootstrap(text, {})).message).toContain(path);
  });
});

describe('loadBootstrap', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bootstrap-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file and names it in errors', () => {
    const ok = join(dir, 'ok.yaml');
    writeFileSync(ok, `api_keys:\n  - key: \${K}\n    name: a\n`);
    expect(loadBootstrap(ok, { K: KEY_A }).api_keys).toEqual([{ key: KEY_A, name: 'a' }]);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'nope: 1\n');
    expect(bootstrapError(() => loadBootstrap(bad, {})).message).toContain(`${bad} is invalid`);
  });

  it('names a file that cannot be read', () => {
    const missing = join(dir, 'missing.yaml');
    expect(bootstrapError(() => loadBootstrap(missing, {})).message).toContain(`cannot read bootstrap file ${missing}`);
  });
});
