/**
 * An experiment's run, by the benchmark's rules (docs/benchmarks.md#method): the gateway pinned to
 * core 0, the fake providers, the load and this process to core 1; one gateway process per run,
 * started afresh so no breaker, cache or pool state crosses runs; the configs interleaved, each
 * repetition starting at the next config; the same arrivals and the same fault schedule in every run.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { freePort, pinSelf, startProc, type Proc } from '../lib.js';
import { rotated } from '../run.js';
import { API_KEY } from '../scenario.js';
import type { Call } from './fakes.js';
import { runLoad, schedule, type Arrival, type Outcome } from './load.js';
import { resolveConfig, type Experiment } from './schema.js';
import type { RunResult } from './results.js';

const GATEWAY_CORE = '0';
export const LOAD_CORE = '1';
/** Requests sent through each fresh gateway before its run, to a fake provider outside the experiment. */
const WARMUP_REQUESTS = 40;

export interface RunnerOptions {
  root: string;
  tmp: string;
  /** `dist`: node dist/main.js (built); `source`: node --import tsx src/main.ts (tests). */
  gateway: 'dist' | 'source';
  progress: (line: string) => void;
}

async function startFakes(e: Experiment, o: RunnerOptions): Promise<Proc> {
  const spec = path.join(o.tmp, 'fakes.json');
  writeFileSync(spec, JSON.stringify({ seed: e.seed, providers: e.providers }));
  const port = await freePort();
  return startProc({ name: 'fake providers', cpu: LOAD_CORE, command: process.execPath, args: ['--import', 'tsx', path.join(o.root, 'benchmarks/experiment/fakes.ts')], env: { EXP_FAKES: spec, EXP_PORT: String(port) }, port, cwd: o.root });
}

async function startGateway(o: RunnerOptions, name: string): Promise<Proc> {
  const port = await freePort();
  const dir = path.join(o.tmp, name);
  mkdirSync(dir, { recursive: true });
  const entry = o.gateway === 'dist' ? [path.join(o.root, 'dist/main.js')] : ['--import', 'tsx', path.join(o.root, 'src/main.ts')];
  return startProc({
    name: `gateway (${name})`,
    cpu: GATEWAY_CORE,
    command: process.execPath,
    args: [...entry, 'serve', '--port', String(port), '--host', '127.0.0.1'],
    env: { GATEWAY_API_KEYS: API_KEY, GATEWAY_TRUSTED_HOSTS: '127.0.0.1' },
    port,
    cwd: o.root,
    stdoutFile: path.join(dir, 'gateway.log'),
  });
}

/** Warms the fresh gateway's code paths on a provider the experiment does not use, then starts the fakes' clock. */
async function prepare(gateway: Proc, fakes: string): Promise<void> {
  const config = JSON.stringify({ provider: 'openai', custom_host: `${fakes}/_warmup/v1`, api_key: 'sk-warmup' });
  const warm: Arrival[] = Array.from({ length: WARMUP_REQUESTS }, (_, i) => ({ id: `warmup-${i}`, atMs: i * 5, stream: i % 2 === 1, prompt: 'warm up' }));
  await runLoad(warm, { port: gateway.port, config, timeoutS: 10 });
  await request(`${fakes}/_reset`, { method: 'POST' }).then((r) => r.body.dump());
}

/** Each request's upstream calls, from the fakes' call log. */
async function upstreamCalls(fakes: string): Promise<Map<string, number>> {
  const calls = (await (await request(`${fakes}/_calls`)).body.json()) as Call[];
  const per = new Map<string, number>();
  for (const c of calls) per.set(c.r, (per.get(c.r) ?? 0) + 1);
  return per;
}

/** Each request's cost, from the gateway's log lines (the request's id is its trace id). */
function costs(logFile: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"cost"')) continue;
    const l = JSON.parse(line) as { trace_id?: string; cost?: number };
    if (l.trace_id && typeof l.cost === 'number') out.set(l.trace_id, l.cost);
  }
  return out;
}

/** A target's name from its JSON path in the config (x-gateway-target: `config.targets[1]`), or the path. */
export function targetName(config: Record<string, unknown>, at: string | null): string | null {
  if (at === null) return null;
  let node: unknown = { config };
  for (const [, key, index] of at.matchAll(/\.?([a-z_]+)|\[(\d+)\]/g)) node = (node as Record<string, unknown> | undefined)?.[key ?? Number(index)];
  const name = (node as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : at;
}

const clock = (s: number): string => (s >= 90 ? `${Math.floor(s / 60)} min ${Math.round(s % 60)} s` : `${Math.round(s)} s`);

/** Every run of the experiment, in interleaved order. */
export async function runAll(e: Experiment, o: RunnerOptions): Promise<{ runs: RunResult[]; runOrder: { rep: number; config: string }[] }> {
  if (!pinSelf(LOAD_CORE)) o.progress(`! could not pin this process to core ${LOAD_CORE} with taskset\n`);
  const fakesProc = await startFakes(e, o);
  const fakes = `http://127.0.0.1:${fakesProc.port}`;
  const names = Object.keys(e.configs);
  const resolved = Object.fromEntries(names.map((n) => [n, resolveConfig(e.configs[n]!, e.providers, fakes).config]));
  const arrivals = schedule(e);
  const order = Array.from({ length: e.repetitions }, (_, i) => rotated(names, i + 1).map((config) => ({ rep: i + 1, config }))).flat();
  const runs: RunResult[] = [];
  const t0 = Date.now();
  try {
    for (const [i, { rep, config }] of order.entries()) {
      const gateway = await startGateway(o, `${config}-${rep}`);
      let outcomes: Outcome[] = [];
      let calls = new Map<string, number>();
      try {
        await prepare(gateway, fakes);
        const perRun = i === 0 ? e.load.duration_s + 5 : (Date.now() - t0) / 1000 / i;
        const tick = (s: number): void =>
          o.progress(`\rrun ${i + 1}/${order.length}: rep ${rep}/${e.repetitions} ${config}, ${Math.min(Math.round(s), e.load.duration_s)}/${e.load.duration_s} s; about ${clock(perRun * (order.length - i) - s)} left   `);
        tick(0);
        outcomes = await runLoad(arrivals, { port: gateway.port, config: JSON.stringify(resolved[config]), timeoutS: e.load.timeout_s, tick });
        calls = await upstreamCalls(fakes);
      } finally {
        await gateway.stop();
      }
      const cost = costs(gateway.opts.stdoutFile!);
      runs.push({ config, rep, requests: outcomes.map((x) => ({ ...x, target: targetName(resolved[config]!, x.target), calls: calls.get(x.id) ?? 0, cost: cost.get(x.id) ?? null })) });
    }
  } finally {
    await fakesProc.stop();
  }
  o.progress(`\rran ${order.length} runs in ${clock((Date.now() - t0) / 1000)}${' '.repeat(40)}\n`);
  return { runs, runOrder: order };
}
