/**
 * A Prometheus server of the test's own (Debian's `prometheus` binary) scraping one gateway every
 * second, and its query API (not a test file itself). Every wait is bounded.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { until } from '../cache-http/_http.js';
import { killOnExit } from '../helpers/children.js';
import { freePort } from '../helpers/net.js';

/** The path of a binary on the PATH, else undefined. */
export function binary(name: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = r.stdout.trim();
  return r.status === 0 && path !== '' ? path : undefined;
}

export interface RunningPrometheus {
  url: string;
  stop(): Promise<void>;
  output(): string;
}

export interface Series {
  metric: Record<string, string>;
  values: [number, string][];
}

/** Writes a config scraping `target` as job `job` every second. */
function writeConfig(dir: string, job: string, target: string): string {
  const config = join(dir, 'prometheus.yml');
  const lines = ['global:', '  scrape_interval: 1s', '  evaluation_interval: 1s', 'scrape_configs:', `  - job_name: ${job}`, '    static_configs:', `      - targets: ['${target}']`, ''];
  writeFileSync(config, lines.join('\n'));
  return config;
}

async function ready(url: string, exited: () => string | undefined): Promise<void> {
  await until(
    'prometheus to answer ready',
    async () => {
      const why = exited();
      if (why !== undefined) throw new Error(`prometheus exited:\n${why}`);
      try {
        const r = await request(`${url}/-/ready`, { headersTimeout: 1000, bodyTimeout: 1000 });
        await r.body.text();
        return r.statusCode === 200;
      } catch {
        return false;
      }
    },
    15_000,
    100,
  );
}

/** Starts Prometheus scraping `target` (host:port) every second; resolves once it answers ready. */
export async function startPrometheus(bin: string, dir: string, job: string, target: string): Promise<RunningPrometheus> {
  const config = writeConfig(dir, job, target);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let log = '';
    const args = [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, `data-${attempt}`)}`, `--web.listen-address=127.0.0.1:${port}`];
    const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    killOnExit(child);
    child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    let exited = false;
    const gone = new Promise<void>((r) => child.once('exit', () => ((exited = true), r())));
    const url = `http://127.0.0.1:${port}`;
    try {
      await ready(url, () => (exited ? log.slice(-2000) : undefined));
      const stop = async (): Promise<void> => {
        if (!exited) child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(killer);
      };
      return { url, stop, output: () => log };
    } catch (e) {
      child.kill('SIGKILL');
      // Another process may have taken the port between freePort() and the start: try another.
      if (attempt >= 3) throw e;
    }
  }
}

async function api<T>(prom: string, path: string, params: URLSearchParams): Promise<T> {
  const r = await request(`${prom}${path}?${params}`, { headersTimeout: 10_000, bodyTimeout: 10_000 });
  const body = (await r.body.json()) as { status: string; error?: string; data?: T };
  if (body.status !== 'success') throw new Error(`prometheus refused ${params.get('query') ?? params.toString()}: ${body.error}`);
  return body.data!;
}

/** A range query, one point a second from `start` to `end` (Unix seconds). */
export async function queryRange(prom: string, expr: string, start: number, end: number): Promise<Series[]> {
  const qs = new URLSearchParams({ query: expr, start: String(start), end: String(end), step: '1' });
  return (await api<{ result: Series[] }>(prom, '/api/v1/query_range', qs)).result;
}

/** The values of `label` on the series of `metric` (what Grafana's label_values(metric, label) lists). */
export async function labelValues(prom: string, metric: string, label: string, start: number, end: number): Promise<string[]> {
  const qs = new URLSearchParams({ 'match[]': metric, start: String(start), end: String(end) });
  return api<string[]>(prom, `/api/v1/label/${encodeURIComponent(label)}/values`, qs);
}

/**
 * What a panel would draw from these series: `data` when some value is finite and not zero; `no data`
 * when none is finite (no series, or only NaN as from 0/0 or a quantile of nothing); `only zeros`.
 */
export function shown(series: Series[]): 'data' | 'no data' | 'only zeros' {
  const finite = series.flatMap((s) => s.values.map(([, v]) => Number(v))).filter((v) => Number.isFinite(v));
  return finite.length === 0 ? 'no data' : finite.some((v) => v !== 0) ? 'data' : 'only zeros';
}
