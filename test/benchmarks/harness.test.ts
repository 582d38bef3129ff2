/**
 * Smoke tests of the benchmark harnesses, so they do not rot: the micro-benchmarks run on a tiny
 * iteration count, and the macro bench's command line answers --help and refuses what it does not
 * know without starting anything. No load is generated here.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COLD_CALLS_PER_ROUND, PROVIDER_OPS, measure, microCases, providerSummary, readMicroCli, runMicro } from '../../benchmarks/micro.js';
import { readCli } from '../../benchmarks/run.js';
import { SCENARIOS } from '../../benchmarks/scenarios/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command in the repository, killed after timeoutMs; BENCH_* variables are not passed on. */
function run(command: string, args: string[], timeoutMs = 10_000): Promise<Exit> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BENCH_')));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('micro-benchmarks', () => {
  it('time every case on a tiny iteration count: a finite ns/call each, one printed line each', async () => {
    const lines: string[] = [];
    const results = await runMicro({ warmupMs: 1, roundMs: 1, rounds: 2, iterations: 5 }, undefined, (s) => lines.push(s));
    const names = microCases().map((c) => c.name);
    expect(results.map((r) => r.name)).toEqual(names);
    for (const r of results) {
      expect(r.nsPerCall, r.name).toBeGreaterThan(0);
      expect(Number.isFinite(r.nsPerCall), r.name).toBe(true);
      expect(r.minNs).toBeLessThanOrEqual(r.nsPerCall);
      expect(r.maxNs).toBeGreaterThanOrEqual(r.nsPerCall);
      expect(r.callsPerRound).toBe(5);
    }
    const out = lines.join('');
    for (const n of names) expect(out).toContain(n);
    // The cases the issue asks for are there.
    for (const part of ['parseBody', 'resolve hit', 'resolve miss', 'plan run', 'SSE decode', 'SSE encode', 'hook run, request phase', 'hook run, response phase']) {
      expect(names.some((n) => n.includes(part)), part).toBe(true);
    }
  });

  it('time the translation of every provider and print the cost next to the OpenAI pass-through', async () => {
    const lines: string[] = [];
    const results = await runMicro({ warmupMs: 1, roundMs: 1, rounds: 1, iterations: 5 }, 'provider ', (s) => lines.push(s));
    const names = results.map((r) => r.name);
    for (const id of ['openai', 'anthropic', 'azure-openai', 'bedrock', 'vertex-ai', 'mistral']) {
      for (const op of [PROVIDER_OPS.request, PROVIDER_OPS.answer, PROVIDER_OPS.chunk]) expect(names, `${id}: ${op}`).toContain(`provider ${id}: ${op}`);
    }
    for (const id of ['openai', 'anthropic', 'bedrock']) expect(names.some((n) => n.startsWith(`provider ${id}: ${PROVIDER_OPS.decode}`)), `${id} decode`).toBe(true);
    expect(names).toContain(`provider bedrock: ${PROVIDER_OPS.sign}`);
    for (const r of results) expect(r.nsPerCall, r.name).toBeGreaterThan(0);
    // The summary: one row per provider, OpenAI's without a difference, the others with one.
    const table = providerSummary(results);
    expect(table.map((row) => row[0])).toEqual(['provider', 'openai', 'anthropic', 'azure-openai', 'bedrock', 'vertex-ai', 'mistral']);
    expect(table[1]![1]).toMatch(/^\d+\.\d\d$/);
    expect(table[2]![1]).toMatch(/^\d+\.\d\d \([+-]\d+\.\d\d\)$/);
    expect(lines.join('')).toContain('Translation cost per provider');
  });

  it('time the guardrail hook stages: --only hook selects the request and response phase, the hook results and the guarded plan run', async () => {
    const lines: string[] = [];
    const results = await runMicro({ warmupMs: 1, roundMs: 1, rounds: 1, iterations: 5 }, 'hook', (s) => lines.push(s));
    const names = results.map((r) => r.name);
    expect(names).toHaveLength(4);
    expect(names.filter((n) => n.startsWith('hook results: hook_results of 2 hooks (4 checks) spliced into a JSON answer'))).toHaveLength(1);
    expect(names.filter((n) => n.startsWith('hook run, request phase: input guardrail regexMatch + wordCount'))).toHaveLength(1);
    expect(names.filter((n) => n.startsWith('hook run, response phase: output guardrail contains + characterCount'))).toHaveLength(1);
    expect(names.filter((n) => n.startsWith('plan run, single target + input and output guardrails'))).toHaveLength(1);
    for (const r of results) {
      expect(r.nsPerCall, r.name).toBeGreaterThan(0);
      expect(r.callsPerRound).toBe(5);
    }
  });

  it('fail a case whose result is wrong instead of timing it', async () => {
    let calls = 0;
    const bad = { name: 'bad', fn: () => ++calls, check: () => { throw new Error('wrong answer'); } };
    await expect(measure(bad, { warmupMs: 1, roundMs: 1, rounds: 3, iterations: 10 })).rejects.toThrow('wrong answer');
    expect(calls).toBe(1);
  });

  it('in cold mode, time each call alone: rounds of COLD_CALLS_PER_ROUND calls, after the warm-up', async () => {
    let calls = 0;
    const c = { name: 'count', fn: () => ++calls };
    const r = await measure(c, { warmupMs: 1, roundMs: 1, rounds: 2, iterations: 3, evictKb: 64 });
    // One checked call, 3 warm-up calls, then 2 rounds of single timed calls.
    expect(calls).toBe(1 + 3 + 2 * COLD_CALLS_PER_ROUND);
    expect(r).toMatchObject({ name: 'count', callsPerRound: COLD_CALLS_PER_ROUND, rounds: 2 });
    expect(r.nsPerCall).toBeGreaterThan(0);
    expect(r.minNs).toBeLessThanOrEqual(r.nsPerCall);
    expect(r.maxNs).toBeGreaterThanOrEqual(r.nsPerCall);
  });

  it('refuse unknown options and bad numbers', () => {
    expect(() => readMicroCli(['--evict-kb', '0.5'])).toThrow(/--evict-kb must be a positive integer/);
    expect(readMicroCli(['--evict-kb', '49152'])).toMatchObject({ help: false, options: { evictKb: 49152 } });
    expect(() => readMicroCli(['--fast'])).toThrow(/--fast/);
    expect(() => readMicroCli(['--rounds', '0'])).toThrow(/--rounds must be a positive integer/);
    expect(() => readMicroCli(['extra'])).toThrow();
    expect(readMicroCli(['--iterations', '3', '--only', 'sse'])).toMatchObject({ help: false, only: 'sse', options: { iterations: 3 } });
  });

  it('run from the command line: npm run bench:micro with a filter and a tiny count', async () => {
    const r = await run('npm', ['run', '--silent', 'bench:micro', '--', '--only', 'sseData', '--iterations', '10', '--rounds', '1']);
    expect(r.stderr.replace(/^npm warn.*\n/gm, '')).toBe('');
    expect(r.code).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('SSE encode (sseData)'));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatch(/\s\d+(\.\d)?\s+\d/);
  });
});

describe('guardrails calibration preload', () => {
  it('spends the CPU a request asks for (x-bench-spin-us) before its answer is written, and changes nothing else', async () => {
    // A server in a child process with the preload, asking itself (after a warm-up request): with
    // the header, the answer cannot arrive before the asked 60 ms have passed, and the process spent
    // CPU on it (a busy wait, not a sleep; at least a quarter of it even on a crowded machine). The
    // answers are the handler's own.
    const script = `
      import http from 'node:http';
      const server = http.createServer((req, res) => res.end('ok:' + req.url));
      server.listen(0, '127.0.0.1', async () => {
        const url = 'http://127.0.0.1:' + server.address().port;
        await (await fetch(url + '/warm')).text();
        const plain = await (await fetch(url + '/plain', { headers: { 'x-bench-spin-us': '0' } })).text();
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        const spun = await (await fetch(url + '/spun', { headers: { 'x-bench-spin-us': '60000' } })).text();
        const spunMs = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        process.stdout.write(JSON.stringify({ spun, spunMs, spunCpuMs: (cpu.user + cpu.system) / 1000, plain }));
        server.close();
      });`;
    const r = await run(process.execPath, ['--import', './benchmarks/calibration-spin.mjs', '--input-type=module', '-e', script]);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { spun: string; spunMs: number; spunCpuMs: number; plain: string };
    expect(out.spun).toBe('ok:/spun');
    expect(out.plain).toBe('ok:/plain');
    expect(out.spunMs).toBeGreaterThanOrEqual(60);
    expect(out.spunCpuMs).toBeGreaterThanOrEqual(15);
  });
});

describe('bench command line', () => {
  it('npm run bench -- --help prints the usage and exits without building or starting anything', async () => {
    const built = (): number | undefined => statSync(path.join(ROOT, 'dist', 'main.js'), { throwIfNoEntry: false })?.mtimeMs;
    const before = built();
    const r = await run('npm', ['run', '--silent', 'bench', '--', '--help']);
    expect(built()).toBe(before);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: npm run bench');
    expect(r.stdout).toContain('--save-latest');
    expect(r.stdout).toContain(`Scenario ids: ${SCENARIOS.map((s) => s.id).join(', ')}`);
    expect(r.stdout).not.toContain('Sluice benchmark');
  });

  it('an unknown argument is an error (exit 2, usage on stderr), before anything starts', async () => {
    const r = await run(process.execPath, ['--import', 'tsx', 'benchmarks/run.ts', '--quick-please']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Unknown option '--quick-please'");
    expect(r.stderr).toContain('Usage: npm run bench');
    expect(r.stdout).toBe('');
  });

  it('reads its options: untracked output by default, latest.json only when asked, BENCH_ONLY ids checked', () => {
    expect(readCli([], {})).toEqual({ kind: 'run', options: { out: undefined, saveLatest: false, build: true } });
    expect(readCli(['--save-latest', '--no-build', '--out', '/tmp/x.json'], {})).toEqual({
      kind: 'run',
      options: { out: '/tmp/x.json', saveLatest: true, build: false },
    });
    expect(readCli([], { BENCH_OUT: '/tmp/y.json' })).toMatchObject({ options: { out: '/tmp/y.json' } });
    expect(readCli(['-h'], {})).toEqual({ kind: 'help' });
    expect(readCli([], { BENCH_ONLY: 'throughput,cache' }).kind).toBe('run');
    expect(readCli([], { BENCH_ONLY: 'throughput,caches' })).toEqual({ kind: 'error', message: 'BENCH_ONLY: unknown scenario id "caches"' });
    expect(readCli(['positional'], {}).kind).toBe('error');
  });
});
