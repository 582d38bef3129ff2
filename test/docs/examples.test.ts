/**
 * Every example a reader would copy from README.md or docs/ runs, so the docs cannot drift from the
 * code:
 *
 * - `sh` / `bash` blocks run in bash, with curl, against a gateway started here on port 0 whose
 *   providers (OpenAI and Mistral, Anthropic, Azure OpenAI) are fake servers on 127.0.0.1; the
 *   documented address is rewritten to the gateway's, and every curl fails on an HTTP error;
 * - `ts` blocks run with tsx against the same gateway (the official `openai` SDK is a dev dependency);
 * - `json` blocks parse, and the ones that are configs compile to a plan, as `sluice plan` does;
 * - `yaml` blocks are bootstrap files (or parts of one) that a gateway starts with.
 *
 * A block that cannot run here (it starts a server, needs a cloud account or a package this
 * repository does not depend on) says so with `<!-- not-run: reason -->` on the line before it.
 * Blocks without a language, or marked `text`, are pictures and sample output.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { buildPlan } from '../../src/plan/build-plan.js';
import { defaultProviders, ProviderRegistry } from '../../src/providers/registry.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { MemoryVersionedStore } from '../../src/state/memory/versioned-store.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';
import { FakeAzure } from '../fakes/azure-server.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { ROOT, codeBlocks, docPages, type CodeBlock } from './markdown.js';

const KIND: Record<string, 'shell' | 'ts' | 'json' | 'yaml'> = {
  sh: 'shell',
  bash: 'shell',
  shell: 'shell',
  ts: 'ts',
  typescript: 'ts',
  json: 'json',
  yaml: 'yaml',
  yml: 'yaml',
};
const PICTURE = new Set(['', 'text']);

const BLOCKS = docPages().flatMap((p) => codeBlocks(p));
const RUNNABLE = BLOCKS.filter((b) => !b.notRun && KIND[b.lang]);
const name = (b: CodeBlock): string => `${b.page}:${b.line} (${b.lang})`;

/** The keys and secrets the examples name, as the environment a reader would have set. */
const WS1_KEY = 'sk-docs-ws1-key-0123456789abcdef';
const TEAM_A_KEY = 'sk-docs-team-a-key-0123456789abcd';
const ANTHROPIC_KEY = 'sk-ant-docs-fake-key';
const AZURE_KEY = 'azure-docs-fake-key';
const ENV: Record<string, string> = {
  SLUICE_KEY: TEST_KEY,
  GATEWAY_KEY: TEST_KEY,
  ADMIN_KEY: TEST_KEY,
  OPS_KEY: 'sk-docs-ops-key-0123456789abcdef',
  ORG_KEY: 'sk-docs-org-key-0123456789abcdef',
  KEY: WS1_KEY,
  WS1_KEY,
  TEAM_A_KEY,
  OPENAI_API_KEY: 'sk-openai-docs-fake',
  NEW_OPENAI_API_KEY: 'sk-openai-docs-fake-rotated',
  MISTRAL_API_KEY: 'sk-mistral-docs-fake',
  ANTHROPIC_API_KEY: ANTHROPIC_KEY,
  AZURE_OPENAI_API_KEY: AZURE_KEY,
  AWS_ACCESS_KEY_ID: 'AKIADOCSFAKE0000',
  AWS_SECRET_ACCESS_KEY: 'docs-fake-secret',
};
const MASTER_KEY = 'a'.repeat(64);
const DOCUMENTED_ADDRESS = /http:\/\/(?:127\.0\.0\.1|localhost):8787/g;

function run(cmd: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, out: `${stdout}\n${stderr}` });
    });
  });
}

describe('docs examples', () => {
  it('every code block is runnable here, or says why not', () => {
    const unclaimed = BLOCKS.filter((b) => !b.notRun && !KIND[b.lang] && !PICTURE.has(b.lang)).map(name);
    expect(unclaimed, 'add a runner, or <!-- not-run: reason --> before the block').toEqual([]);
    expect(RUNNABLE.filter((b) => KIND[b.lang] === 'shell').length).toBeGreaterThan(5);
  });

  let gw: TestGateway;
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let azure: FakeAzure;

  beforeAll(async () => {
    openai = await FakeOpenAI.start();
    anthropic = await FakeAnthropic.start(ANTHROPIC_KEY);
    azure = await FakeAzure.start({ apiKey: AZURE_KEY, deployments: { 'gpt4o-prod': 'gpt-4o', mini: 'gpt-4o-mini' } });
    gw = await startGateway({
      masterKey: MASTER_KEY,
      options: {
        'provider-base-urls': [
          `openai=${openai.baseUrl}`,
          `mistral=${openai.baseUrl}`,
          `anthropic=${anthropic.baseUrl}`,
          `azure-openai=${azure.origin}/openai`,
        ].join(','),
      },
      bootstrapYaml: `
api_keys:
  - { key: ${WS1_KEY}, name: backend, workspace_id: ws-1, organisation_id: org-1 }
  - { key: ${TEAM_A_KEY}, name: team-a, workspace_id: ws-a, organisation_id: org-1 }
virtual_keys:
  openai-prod: { provider: openai, api_key: sk-prod }
`,
    });
  });
  afterAll(async () => {
    await gw?.close();
    await openai?.close();
    await anthropic?.close();
    await azure?.close();
  });

  const shell = RUNNABLE.filter((b) => KIND[b.lang] === 'shell');
  it.each(shell.map((b) => [name(b), b] as const))('%s runs against the gateway', async (_n, b) => {
    const script = `set -euo pipefail\ncurl() { command curl --fail-with-body --silent --show-error --max-time 10 "$@"; }\n${b.code.replace(DOCUMENTED_ADDRESS, gw.url)}\n`;
    const r = await run('bash', ['-c', script], ENV, 30_000);
    expect(r.code, r.out).toBe(0);
  });

  const ts = RUNNABLE.filter((b) => KIND[b.lang] === 'ts');
  it.each(ts.map((b) => [name(b), b] as const))('%s runs against the gateway', async (_n, b) => {
    // Under node_modules/ so that the example's imports resolve as they would in a project.
    const dir = join(ROOT, 'node_modules', '.cache', 'sluice-docs-examples');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${b.page.replace(/\W/g, '_')}_${b.line}.mts`);
    writeFileSync(file, b.code.replace(DOCUMENTED_ADDRESS, gw.url));
    const r = await run(process.execPath, ['--import', 'tsx', file], ENV, 60_000);
    expect(r.code, r.out).toBe(0);
    expect(r.out.trim(), 'the example printed nothing').not.toBe('');
  }, 70_000);

  const json = RUNNABLE.filter((b) => KIND[b.lang] === 'json');
  it.each(json.map((b) => [name(b), b] as const))('%s is JSON, and a config compiles', (_n, b) => {
    const value = JSON.parse(b.code) as Record<string, unknown>;
    const isConfig = ['provider', 'virtual_key', 'strategy', 'targets', 'cache', 'retry', 'prompt_id'].some((k) => k in value);
    if (!isConfig) return;
    const vk = { provider: 'openai', api_key: 'sk-x' };
    const plan = buildPlan(parseConfig(value), {
      virtualKeys: new MemoryVersionedStore(Object.entries({ 'openai-primary': vk, 'openai-backup': vk })),
      registry: new ProviderRegistry(defaultProviders()),
      hostGuard: HostGuard.fromEnv('127.0.0.1'),
    });
    expect(plan).toBeDefined();
  });

  const yaml = RUNNABLE.filter((b) => KIND[b.lang] === 'yaml');
  it.each(yaml.map((b) => [name(b), b] as const))('%s starts a gateway as a bootstrap file', async (_n, b) => {
    const g = await startGateway({ bootstrapYaml: b.code, env: ENV, masterKey: MASTER_KEY, options: { 'trusted-hosts': '127.0.0.1,10.0.0.5' } });
    await g.close();
  });
});
