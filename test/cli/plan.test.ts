import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** `sluice plan` prints the plan tree a config compiles to, with credentials redacted. */
const run = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'plan', ...args], { encoding: 'utf8', timeout: 30_000 });

describe('sluice plan', () => {
  it('prints the inherited plan tree with JSON paths and no secret', () => {
    const config = {
      strategy: { mode: 'fallback' },
      retry: { attempts: 2 },
      targets: [
        { name: 'a', provider: 'openai', api_key: 'sk-very-secret-1' },
        { provider: 'openai', api_key: 'sk-very-secret-2', retry: { attempts: 0 } },
      ],
    };
    const r = run(JSON.stringify(config));
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain('sk-very-secret');
    const plan = JSON.parse(r.stdout);
    expect(plan.kind).toBe('fallback');
    expect(plan.children.map((c: { path: string }) => c.path)).toEqual(['config.targets[0]', 'config.targets[1]']);
    expect(plan.children[0].settings.retry).toEqual({ attempts: 2 });
    expect(plan.children[1].settings.retry).toEqual({ attempts: 0 });
    expect(plan.children[0].target.api_key).toBe('[redacted]');
  });

  it('redacts by kind: URL userinfo, check header values (names kept), secret fields', () => {
    const config = {
      provider: 'openai',
      api_key: 'sk-plan-kind-key',
      custom_host: 'https://svc:plan-kind-host-pass@llm.example.com/v1',
      input_guardrails: [{ 'default.webhook': { webhookURL: 'https://hook:plan-kind-hook-pass@hooks.example.com/x', headers: { authorization: 'Bearer plan-kind-header' } } }],
    };
    const r = run(JSON.stringify(config));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('plan-kind');
    const plan = JSON.parse(r.stdout);
    expect(plan.target.api_key).toBe('[redacted]');
    expect(JSON.stringify(plan)).toContain('https://[redacted]@llm.example.com/v1');
    const check = plan.settings.input_guardrails[0]['default.webhook'];
    expect(check).toEqual({ webhookURL: 'https://[redacted]@hooks.example.com/x', headers: { authorization: '[redacted]' } });
  });

  it('refuses cloud credentials the provider does not use, and prints none of them', () => {
    const config = {
      provider: 'openai',
      api_key: 'sk-plan-secret-api-key',
      cloud_b_access_key_id: 'AKIA-plan-secret-id',
      cloud_b_secret_access_key: 'plan-secret-access-key',
      cloud_b_session_token: 'plan-secret-session-token',
      cloud_b_region: 'us-east-1',
    };
    const r = run(JSON.stringify(config));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('config.cloud_b_access_key_id');
    expect(r.stdout + r.stderr).not.toContain('plan-secret');
  });

  it('prints the prompt a config renders (looked up per request, so not checked here)', () => {
    const r = run(JSON.stringify({ provider: 'openai', api_key: 'k', prompt_id: 'support-reply@0b6f7c9e-3d1a-4c55-9e21-7f3a5b8c2d10' }));
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).prompt).toEqual({ ref: 'support-reply', version_id: '0b6f7c9e-3d1a-4c55-9e21-7f3a5b8c2d10', param: 'config.prompt_id' });
  });

  it('names the bad path of an invalid config and exits non-zero', () => {
    const r = run('{"provider":"openai","api_key":"k","retry":{"attempts":"x"}}');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('retry.attempts');
  });

  it('an unknown virtual key without --bootstrap says to pass it', () => {
    const r = run('{"virtual_key":"openai-primary"}');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('No virtual key has the id "openai-primary"');
    expect(r.stderr).toContain('pass --bootstrap FILE');
  });

  it('an unknown virtual key with --bootstrap names the file that does not declare it', () => {
    const r = run('{"virtual_key":"no-such-key"}', '--bootstrap', 'pipelines/bootstrap.example.yaml');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('pipelines/bootstrap.example.yaml does not declare it');
  });

  it('reads a bootstrap whose secrets are not in the environment (it serves nothing), and prints none of them', () => {
    const env = { ...process.env };
    delete env.SLUICE_KEY;
    delete env.OPENAI_API_KEY;
    delete env.OPENAI_BASE_URL;
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', 'plan', 'pipelines/fallback.json', '--bootstrap', 'pipelines/bootstrap.example.yaml'],
      { encoding: 'utf8', timeout: 30_000, env },
    );
    expect(r.status, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.kind).toBe('fallback');
    expect(plan.children.map((c: { target: { api_key: string } }) => c.target.api_key)).toEqual(['[redacted]', '[redacted]']);
    // The ${OPENAI_BASE_URL:-default} still takes its default; the placeholders never reach the output.
    expect(r.stdout).not.toContain('placeholder');
  });

  it('prints usage with --help', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'plan', '--help'], { encoding: 'utf8' });
    expect(out).toContain('Usage: sluice plan');
  });
});
