import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadBootstrap } from '../../src/config/bootstrap.js';
import { loadPipelines } from '../../src/config/pipelines.js';

const FILE = 'pipelines/bootstrap.example.yaml';
const ENV = { SLUICE_KEY: 'sk-example-test-key-0123456789', OPENAI_API_KEY: 'sk-provider-from-env' };

/** Every virtual_key a config names, at any depth. */
function virtualKeys(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => virtualKeys(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'virtual_key' && typeof v === 'string') out.add(v);
      else virtualKeys(v, out);
    }
  }
  return out;
}

/** The example bootstrap that makes the shipped saved configs work out of the box. */
describe('pipelines/bootstrap.example.yaml', () => {
  const saved = loadPipelines('pipelines', true);

  it('declares every virtual key the saved configs in pipelines/ name', () => {
    const declared = Object.keys(loadBootstrap(FILE, ENV).virtual_keys);
    const named = virtualKeys([...saved.values()]);
    expect(named.size).toBeGreaterThan(0);
    for (const id of named) expect(declared, `virtual key ${id}`).toContain(id);
  });

  it('is not taken for a saved config', () => {
    expect([...saved.keys()].some((id) => id.startsWith('bootstrap'))).toBe(false);
  });

  it('takes its secrets from the environment and writes none', () => {
    const b = loadBootstrap(FILE, ENV);
    expect(b.api_keys.map((k) => k.key)).toEqual([ENV.SLUICE_KEY]);
    for (const vk of Object.values(b.virtual_keys)) expect(vk.api_key).toBe(ENV.OPENAI_API_KEY);
    const text = readFileSync(FILE, 'utf8');
    for (const m of text.matchAll(/^\s*(?:-\s*)?(key|api_key):\s*(\S+)/gm)) expect(m[2], m[0]).toMatch(/^\$\{[A-Z_]+\}$/);
    expect(() => loadBootstrap(FILE, { OPENAI_API_KEY: 'x' })).toThrow(/SLUICE_KEY/);
  });

  it('reaches OpenAI by default and OPENAI_BASE_URL when set, as an operator base URL (no custom_host)', () => {
    expect(loadBootstrap(FILE, ENV).provider_base_urls).toEqual({ openai: 'https://api.openai.com/v1' });
    const local = loadBootstrap(FILE, { ...ENV, OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' });
    expect(local.provider_base_urls).toEqual({ openai: 'http://127.0.0.1:9999/v1' });
    for (const vk of Object.values(local.virtual_keys)) expect(vk.custom_host).toBeUndefined();
  });
});
