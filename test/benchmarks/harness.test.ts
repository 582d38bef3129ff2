/**
 * The benchmark harness, so it does not rot: its command line (answers --help and refuses what it
 * does not know without building or starting anything), the summary table and the targets it
 * computes from rep figures, what each scenario sends, and one short wrk run against a server here.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cpuSeconds, runWrk } from '../../benchmarks/lib.js';
import { checks, readCli, rotated, summaryTable, type Rep, type ScenarioResult } from '../../benchmarks/run.js';
import { SCENARIOS } from '../../benchmarks/scenarios/index.js';
import { renderBenchTable, type Results } from '../../scripts/bench-table.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', reject).once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const rep = (cpuUsPerReq: number): Rep => ({ cpuUsPerReq, rps: 1000, errors: 0, p50Ms: 1, p99Ms: 2 });

describe('bench command line', () => {
  it('reads its options; defaults: every scenario, 2 reps, a full run that builds and writes no tracked file', () => {
    expect(readCli([])).toEqual({
      kind: 'run',
      options: { scenarios: SCENARIOS, against: undefined, reps: 2, quick: false, saveLatest: false, out: undefined, build: true },
    });
    const cli = readCli(['--only', 'throughput, guardrails', '--quick', '--reps', '3', '--against', 'main', '--save-latest', '--no-build']);
    expect(cli).toMatchObject({ kind: 'run', options: { against: 'main', reps: 3, quick: true, saveLatest: true, build: false } });
    expect(cli.kind === 'run' && cli.options.scenarios.map((s) => s.id)).toEqual(['throughput', 'guardrails']);
    expect(readCli(['-h'])).toEqual({ kind: 'help' });
  });

  it('refuses an unknown option or scenario, a bad count and an empty ref', () => {
    expect(readCli(['--fast'])).toMatchObject({ kind: 'error', message: expect.stringContaining('--fast') });
    expect(readCli(['--only', 'throughput,caches'])).toEqual({ kind: 'error', message: 'unknown scenario "caches"' });
    expect(readCli(['--reps', '0'])).toEqual({ kind: 'error', message: '--reps must be a positive integer' });
    expect(readCli(['--against', ''])).toEqual({ kind: 'error', message: '--against needs a git ref' });
    expect(readCli(['positional']).kind).toBe('error');
  });

  it('npm run bench -- --help prints the usage without building or starting anything', async () => {
    const built = (): number | undefined => statSync(path.join(ROOT, 'dist', 'main.js'), { throwIfNoEntry: false })?.mtimeMs;
    const before = built();
    const r = await run('npm', ['run', '--silent', 'bench', '--', '--help']);
    expect(r.code).toBe(0);
    expect(built()).toBe(before);
    expect(r.stdout).toContain('--against <ref>');
    expect(r.stdout).toContain(`Scenarios: ${SCENARIOS.map((s) => s.id).join(', ')}`);
    expect(r.stdout).not.toContain('Sluice benchmark');
  });

  it('an unknown argument exits 2 with the usage on stderr', async () => {
    const r = await run(process.execPath, ['--import', 'tsx', 'benchmarks/run.ts', '--quick-please']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Unknown option '--quick-please'");
    expect(r.stderr).toContain('Usage: npm run bench');
    expect(r.stdout).toBe('');
  });
});

describe('summary', () => {
  const plain: ScenarioResult = { id: 'throughput', title: 't', reps: { proxy: [rep(40), rep(50)], current: [rep(80), rep(110)] } };

  it('gives each contender its median CPU ± half the range, and the ratio rep by rep with its range', () => {
    expect(summaryTable([plain])).toEqual({
      header: ['scenario', 'proxy µs/req', 'gateway µs/req', 'gateway/proxy'],
      rows: [['throughput', '45.0 ±11%', '95.0 ±16%', '2.10× (2.00–2.20)']],
    });
  });

  it('with a ref: its column, current ÷ ref, and each ÷ the proxy', () => {
    const withRef: ScenarioResult = { ...plain, reps: { ...plain.reps, ref: [rep(100), rep(100)] } };
    const t = summaryTable([withRef]);
    expect(t.header).toEqual(['scenario', 'proxy µs/req', 'ref µs/req', 'current µs/req', 'current/ref', 'ref/proxy', 'current/proxy']);
    expect(t.rows).toEqual([['throughput', '45.0 ±11%', '100.0 ±0%', '95.0 ±16%', '0.95× (0.80–1.10)', '2.25× (2.00–2.50)', '2.10× (2.00–2.20)']]);
  });

  it('a scenario the ref does not serve shows dashes in its ref columns', () => {
    const withRef: ScenarioResult = { ...plain, reps: { ...plain.reps, ref: [rep(100), rep(100)] } };
    const t = summaryTable([withRef, { ...plain, id: 'responses' }]);
    expect(t.rows[1]).toEqual(['responses', '45.0 ±11%', '—', '95.0 ±16%', '—', '—', '2.10× (2.00–2.20)']);
  });

  it('checks the plain request against the minimal proxy on the same rep-by-rep median', () => {
    expect(checks([plain])).toEqual([{ target: expect.stringContaining('≤ 2.0×'), value: '2.10×', met: false }]);
    expect(checks([{ ...plain, reps: { proxy: [rep(50)], current: [rep(99)] } }])[0]!.met).toBe(true);
    expect(checks([{ ...plain, id: 'guardrails' }])).toEqual([]);
  });

  it('starts each rep at the next contender', () => {
    expect([1, 2, 3, 4].map((n) => rotated(['ref', 'current', 'proxy'], n).join(' '))).toEqual([
      'ref current proxy',
      'current proxy ref',
      'proxy ref current',
      'ref current proxy',
    ]);
  });

  it('renders into docs/benchmarks.md: the ref, the summary table and the targets', () => {
    const t = summaryTable([{ ...plain, reps: { ...plain.reps, ref: [rep(100), rep(100)] } }]);
    const r: Results = {
      startedAt: '2026-01-02T03:04:05.000Z',
      commit: 'abc',
      against: { ref: 'main', commit: 'def' },
      quick: true,
      elapsedS: 60,
      config: { reps: 2 },
      machine: { nproc: 2, cpuModel: 'cpu', node: 'v20', platform: 'Linux' },
      checks: checks([plain]),
      summary: t,
      scenarios: { throughput: { title: 'plain', notes: ['proxy: CPU µs/req 40.0 / 50.0'] } },
    };
    const md = renderBenchTable(r);
    expect(md).toContain('Measured against `main` (commit `def`)');
    expect(md).toContain('| throughput | 45.0 ±11% | 100.0 ±0% | 95.0 ±16% | 0.95× (0.80–1.10) | 2.25× (2.00–2.50) | 2.10× (2.00–2.20) |');
    expect(md).toContain('| **no** |');
    expect(md).toContain('### `throughput`');
  });
});

describe('scenarios', () => {
  it('each sends a JSON POST with a gateway key, and has an id of its own', () => {
    expect(new Set(SCENARIOS.map((s) => s.id)).size).toBe(SCENARIOS.length);
    for (const s of SCENARIOS) {
      const req = s.request('http://127.0.0.1:9');
      expect(() => JSON.parse(req.body), s.id).not.toThrow();
      expect(req.headers['x-gateway-api-key'], s.id).toBeTruthy();
      if (req.headers['x-gateway-config']) expect(JSON.parse(req.headers['x-gateway-config']), s.id).toBeTypeOf('object');
    }
  });
});

describe('wrk run', () => {
  const hasWrk = (process.env.PATH ?? '').split(':').some((d) => statSync(path.join(d, 'wrk'), { throwIfNoEntry: false }));

  it.skipIf(!hasWrk)('sends the body and every header (a JSON config included) and counts the answers; /proc gives the CPU', async () => {
    const seen: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (s: string) => (body += s));
      req.on('end', () => {
        if (seen.length < 5) seen.push({ headers: req.headers, body });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const config = JSON.stringify({ provider: 'openai', custom_host: 'http://127.0.0.1:1/v1' });
    const cpu0 = cpuSeconds(process.pid);
    try {
      const w = await runWrk(
        { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`, headers: { 'content-type': 'application/json', 'x-gateway-config': config }, body: '{"a":1}' },
        { connections: 2, durationS: 1 },
      );
      expect(w.requests).toBeGreaterThan(0);
      expect(w.errors).toBe(0);
      expect(w.p50Ms).toBeGreaterThan(0);
    } finally {
      server.close();
    }
    expect(seen[0]).toMatchObject({ body: '{"a":1}', headers: { 'content-type': 'application/json', 'x-gateway-config': config } });
    expect(cpuSeconds(process.pid)).toBeGreaterThan(cpu0);
  });
});
