/**
 * The dashboard's cache panels against a real Prometheus: a Prometheus server of our own (Debian's
 * `prometheus` package) scrapes a gateway every second while the test makes simple-cache HITs and
 * semantic-cache SEMANTIC_HITs, and the panel's own expression (the dashboard's text, with Grafana's
 * variables filled in) must return a ratio for each mode. An expression that names a label value the
 * gateway never writes (`result="hit"`) returns no data here, as it did in Grafana.
 *
 * Skipped, saying why, only when no `prometheus` binary is installed (`.ci/run` installs it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatBody, post, until } from '../cache-http/_http.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DASHBOARD = JSON.parse(readFileSync(join(ROOT, 'grafana', 'dashboards', 'sluice.json'), 'utf8')) as { panels: Panel[] };

interface Panel {
  title: string;
  panels?: Panel[];
  targets?: { expr?: string }[];
}

const JOB = 'sluice-live';
/** Grafana's `$__rate_interval` is at least four scrape intervals; scrapes here are 1 s apart. */
const RATE_INTERVAL = '5s';
/** The whole test, Prometheus's start included, stays well inside this. */
const DEADLINE_MS = 45_000;

function prometheusBinary(): string | undefined {
  const r = spawnSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' });
  const path = r.stdout.trim();
  return r.status === 0 && path !== '' ? path : undefined;
}

const PROMETHEUS = prometheusBinary();
if (!PROMETHEUS) {
  console.warn('live Prometheus test skipped: no `prometheus` binary on PATH (apt-get install -y prometheus; .ci/run installs it)');
}

/** The panel's expression as Grafana sends it: `$job` and `$__rate_interval` filled in. */
function panelExpr(title: string): string {
  const walk = (ps: Panel[]): Panel[] => ps.flatMap((p) => [p, ...walk(p.panels ?? [])]);
  const panel = walk(DASHBOARD.panels).find((p) => p.title === title);
  const expr = panel?.targets?.[0]?.expr;
  if (!expr) throw new Error(`the dashboard has no panel "${title}" with an expression`);
  const filled = expr.replaceAll('$__rate_interval', RATE_INTERVAL).replaceAll('$job', JOB);
  if (filled.includes('$')) throw new Error(`panel "${title}" uses a variable this test does not fill: ${filled}`);
  return filled;
}

/** A port that was free a moment ago (Prometheus takes an address, not a listening socket). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface RunningPrometheus {
  url: string;
  child: ChildProcess;
  output: () => string;
}

/** Starts Prometheus scraping `target` every second; resolves once it answers ready. */
async function startPrometheus(bin: string, dir: string, target: string): Promise<RunningPrometheus> {
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    ['global:', '  scrape_interval: 1s', '  evaluation_interval: 1s', 'scrape_configs:', `  - job_name: ${JOB}`, '    static_configs:', `      - targets: ['${target}']`, ''].join('\n'),
  );
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let log = '';
    const child = spawn(bin, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, `data-${attempt}`)}`, `--web.listen-address=127.0.0.1:${port}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    let exited = false;
    child.once('exit', () => (exited = true));
    const url = `http://127.0.0.1:${port}`;
    try {
      await until(
        'prometheus to answer ready',
        async () => {
          if (exited) throw new Error(`prometheus exited:\n${log.slice(-2000)}`);
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
      return { url, child, output: () => log };
    } catch (e) {
      child.kill('SIGKILL');
      // Another process may have taken the port between freePort() and the start: try another.
      if (attempt >= 3) throw e;
    }
  }
}

async function queryRange(prom: string, expr: string): Promise<{ metric: Record<string, string>; values: [number, string][] }[]> {
  const end = Date.now() / 1000;
  const qs = new URLSearchParams({ query: expr, start: String(end - 30), end: String(end), step: '1' });
  const r = await request(`${prom}/api/v1/query_range?${qs}`, { headersTimeout: 5000, bodyTimeout: 5000 });
  const body = (await r.body.json()) as { status: string; error?: string; data?: { result: { metric: Record<string, string>; values: [number, string][] }[] } };
  if (body.status !== 'success') throw new Error(`prometheus refused the query ${expr}: ${body.error}`);
  return body.data!.result;
}

describe.skipIf(!PROMETHEUS)('the Grafana cache panels against a live Prometheus', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let prom: RunningPrometheus | undefined;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-prom-'));
    fake = await FakeOpenAI.start();
    gw = await startGateway();
    prom = await startPrometheus(PROMETHEUS!, dir, new URL(gw.url).host);
  }, 30_000);

  afterAll(async () => {
    if (prom && prom.child.exitCode === null) {
      const exited = new Promise((r) => prom!.child.once('exit', r));
      prom.child.kill('SIGTERM');
      await exited;
    }
    await gw?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 20_000);

  const send = (mode: 'simple' | 'semantic', body: unknown, namespace: string) =>
    post(
      `${gw.url}/v1/chat/completions`,
      gw.headers({
        'x-gateway-config': JSON.stringify({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'k', cache: { mode, max_age: 600 } }),
        'x-gateway-cache-namespace': namespace,
      }),
      body,
    );

  it(
    '"Cache hit ratio by mode" shows a ratio for simple HITs and for semantic SEMANTIC_HITs',
    async () => {
      const expr = panelExpr('Cache hit ratio by mode');
      const simpleNs = `simple-${randomUUID()}`;
      const simpleBody = chatBody('What is the capital of France?');
      expect((await send('simple', simpleBody, simpleNs)).cacheStatus).toBe('MISS');
      const long = 'Explain how a hash map resolves collisions with open addressing and with separate chaining in detail';
      const seen = new Set<string>();
      let last = '(no answer yet)';
      // Every round makes one simple HIT and one semantic SEMANTIC_HIT (a first request in a fresh
      // namespace, then the same words with one more), so the counters keep rising across the
      // scrapes, until the panel's expression has a value for both modes.
      const ratios = await until(
        'the panel expression to return a hit ratio for both modes',
        async () => {
          const hit = await send('simple', simpleBody, simpleNs);
          expect(hit.cacheStatus).toBe('HIT');
          const ns = `semantic-${randomUUID()}`;
          expect((await send('semantic', chatBody(long), ns)).cacheStatus).toBe('MISS');
          const near = await send('semantic', chatBody(`${long} please`), ns);
          expect(near.cacheStatus).toBe('SEMANTIC_HIT');
          seen.add(hit.cacheStatus!).add(near.cacheStatus!);
          const series = await queryRange(prom!.url, expr);
          last = JSON.stringify(series.map((x) => ({ mode: x.metric.mode, last: x.values.at(-1)?.[1] })));
          const byMode = new Map(series.map((s) => [s.metric.mode, s.values.map(([, v]) => Number(v)).filter((v) => Number.isFinite(v) && v > 0)]));
          return (byMode.get('simple')?.length ?? 0) > 0 && (byMode.get('semantic')?.length ?? 0) > 0 ? byMode : false;
        },
        DEADLINE_MS - 15_000,
        250,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; the expression ${expr} last returned ${last}`);
      });
      expect([...seen].sort()).toEqual(['HIT', 'SEMANTIC_HIT']);
      // A share of the lookups, never more than all of them.
      for (const v of [...ratios.get('simple')!, ...ratios.get('semantic')!]) expect(v).toBeLessThanOrEqual(1);
    },
    DEADLINE_MS,
  );
});
