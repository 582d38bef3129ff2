/**
 * A short experiment run end to end, as `npm run experiment` runs it (the gateway from src/ with
 * tsx, so no build): real fake providers, a real gateway per run, the load, and then the report,
 * whose numbers are checked against the results file it was made from.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Results } from '../../benchmarks/experiment/report.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'sluice-experiment-test-'));

const FILE = `
name: short
description: A provider that fails for a moment, alone or with a steady backup.
seed: 4
repetitions: 2
providers:
  flaky:
    latency: { dist: normal, mean_ms: 20, sd_ms: 5 }
    faults: [{ kind: outage, start_s: 0.6, end_s: 1.4, status: 503 }]
  steady:
    latency: { dist: fixed, ms: 10 }
configs:
  alone: { fake: flaky }
  with_backup:
    strategy: { mode: fallback }
    targets: [{ fake: flaky }, { fake: steady }]
load: { rate_per_s: 25, duration_s: 2, stream_share: 0.3 }
`;

let run: { code: number | null; stderr: string };
let results: Results;
let report: string;

beforeAll(async () => {
  writeFileSync(path.join(tmp, 'short.yaml'), FILE);
  run = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'benchmarks/experiment.ts', path.join(tmp, 'short.yaml'), '--gateway-source', '--out', path.join(tmp, 'out')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', reject).once('close', (code) => resolve({ code, stderr }));
  });
  if (run.code === 0) {
    results = JSON.parse(readFileSync(path.join(tmp, 'out', 'results.json'), 'utf8')) as Results;
    report = readFileSync(path.join(tmp, 'out', 'report.md'), 'utf8');
  }
}, 300_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The cells of the report table row that starts with `first`. */
function row(first: string, after: string): string[] {
  const section = report.slice(report.indexOf(after));
  const line = section.split('\n').find((l) => l.startsWith(`| ${first} |`));
  expect(line, `a row for ${first} after "${after}"`).toBeDefined();
  return line!.split('|').slice(1, -1).map((c) => c.trim());
}

const exact = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(q * xs.length) - 1)]!;

describe('an experiment run end to end', () => {
  it('runs every config in every repetition, interleaved, and says so on stderr', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/run 1\/4: rep 1\/2 alone, \d+\/2 s; about .* left/);
    expect(results.runOrder).toEqual([
      { rep: 1, config: 'alone' },
      { rep: 1, config: 'with_backup' },
      { rep: 2, config: 'with_backup' },
      { rep: 2, config: 'alone' },
    ]);
    const counts = results.runs.map((r) => r.requests.length);
    expect(new Set(counts).size).toBe(1);
    expect(counts[0]).toBeGreaterThan(20);
  });

  it('meets the same fault schedule in every run: the provider alone fails in its outage, the backup saves every request', () => {
    for (const r of results.runs.filter((x) => x.config === 'alone')) {
      const failed = r.requests.filter((q) => !q.ok);
      expect(failed.length).toBeGreaterThan(0);
      // Only the outage answers 503; without retry each failed request made one call.
      for (const q of failed) expect(q).toMatchObject({ status: 503, calls: 1 });
    }
    const arrivals = results.runs.map((r) => r.requests.map((q) => [q.id, q.t, q.stream]));
    for (const a of arrivals) expect(a).toEqual(arrivals[0]);
    for (const r of results.runs.filter((x) => x.config === 'with_backup')) {
      expect(r.requests.every((q) => q.ok)).toBe(true);
      const saved = r.requests.filter((q) => q.target === 'steady');
      expect(saved.length).toBeGreaterThan(0);
      for (const q of saved) expect(q.calls).toBe(2);
    }
  });

  it("states per config what results.json holds", () => {
    for (const config of results.configs) {
      const rs = results.runs.filter((r) => r.config === config).flatMap((r) => r.requests);
      const ok = rs.filter((q) => q.ok).map((q) => q.ms);
      const [, requests, success, p50, , p99, , , calls] = row(config, '## Per config');
      expect(Number(requests)).toBe(rs.length);
      expect(Number(success)).toBeCloseTo(ok.length / rs.length, 4);
      expect(Number(calls)).toBeCloseTo(rs.reduce((a, q) => a + q.calls, 0) / rs.length, 3);
      // HDR percentiles, 3 significant digits: within 1% of the exact ones.
      expect(Math.abs(Number(p50) - exact(ok, 0.5)) / exact(ok, 0.5)).toBeLessThan(0.01);
      expect(Math.abs(Number(p99) - exact(ok, 0.99)) / exact(ok, 0.99)).toBeLessThan(0.01);
      const h = hdr.decodeFromCompressedBase64(results.summary[config]!.hdr);
      expect(h.totalCount).toBe(ok.length);
    }
  });

  it('names a winner only where the interval excludes zero, and says "no difference" otherwise', () => {
    const success = results.verdicts.find((v) => v.metric === 'success_ratio')!;
    expect(success.best).toBe('with_backup');
    const cells = row('success ratio', '## Verdicts');
    expect(cells[2]).toBe(success.interval.includesZero ? 'no difference' : '**with_backup**');
    for (const v of results.verdicts) expect(v.winner === undefined).toBe(v.interval.includesZero);
    expect(report).toContain(`${success.interval.estimate >= 0 ? '+' : ''}${success.interval.estimate.toFixed(4)} (${success.interval.low.toFixed(4)} to ${success.interval.high.toFixed(4)})`);
  });

  it('draws its charts as SVG files the report links', () => {
    expect(results.charts.map((c) => c.file)).toEqual(expect.arrayContaining(['latency-cdf.svg', 'over-time.svg', 'targets.svg', 'upstream-calls.svg']));
    for (const c of results.charts) {
      expect(report).toContain(`](${c.file})`);
      expect(readFileSync(path.join(tmp, 'out', c.file), 'utf8')).toMatch(/^<svg /);
    }
  });
});
