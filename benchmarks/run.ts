/**
 * Sluice gateway benchmark: gateway vs direct-to-upstream, on one 2-core machine.
 *
 *   npm run bench -- --help       # usage (see USAGE below); unknown arguments are an error
 *   npm run bench                 # full run, ≈ 10 minutes
 *   BENCH_QUICK=1 npm run bench   # ≈ 3.5 minutes, for a smoke check of the numbers
 *
 * It builds the gateway (dist/) first, unless --no-build. Results go to an untracked
 * benchmarks/results/run-<UTC time>.json (or --out / BENCH_OUT); the tracked summary
 * benchmarks/results/latest.json is written only with --save-latest.
 *
 * Layout (see benchmarks/README.md, "Method"): the gateway is pinned to core 0; the fake upstream, this
 * orchestrator (autocannon, undici) and wrk are pinned to core 1. Every measurement interleaves the
 * gateway and the direct baseline over BENCH_REPS repetitions and reports medians; in the throughput,
 * fixed-rate, routing-overhead and guardrails scenarios each rep starts at the next contender (A B C, B C A, ...).
 *
 * Scenarios are the entries of SCENARIOS (benchmarks/scenarios/index.ts, one file per scenario): each
 * gets a BenchContext (processes, targets, config) and returns table rows, target checks and raw data. Ids: throughput, fixed-rate, streams, provider-streams, log-warn,
 * routing-overhead, routing-experiment, guardrails, cache, semantic. BENCH_ONLY=id1,id2 runs a subset.
 *
 * Other env: BENCH_REPS (default 3), BENCH_CPU_PROF=<dir> (run the gateway under node --cpu-prof,
 * profile written to <dir> when it stops; figures are then not representative),
 * BENCH_OUT=<file> (same as --out), BENCH_REDIS_URL (default
 * redis://127.0.0.1:6379/15, flushed by the cache scenario), BENCH_NO_REDIS=1 (skip the Redis figures).
 * Traffic goes to 127.0.0.1 only. Every child process is stopped on exit, error or Ctrl-C.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  BENCH_DIR,
  ManagedProcess,
  REPO_ROOT,
  WRK_INSTALL_HINT,
  findWrk,
  fetchOnce,
  fmt,
  freePort,
  installCleanup,
  machineInfo,
  onPath,
  median,
  pinSelf,
  readRssMb,
  round,
  startProcess,
  stopAll,
  table,
  waitForQuiet,
  type HttpTarget,
} from './lib.js';
import { CFG, CHAT_BODY, QUICK } from './config.js';
import type { BenchContext } from './scenario.js';
import { SCENARIOS } from './scenarios/index.js';
import { BENCH_MARKER, BENCH_PAGE, readResults, renderBenchTable } from '../scripts/bench-table.js';
import { writeOrCheck } from '../scripts/markers.js';


/** The tracked summary of a full run (docs/benchmarks.md's table is rendered from it): written only with --save-latest. */
export const LATEST_FILE = path.join(BENCH_DIR, 'results', 'latest.json');

export const USAGE = `Usage: npm run bench [-- options]
       node --import tsx benchmarks/run.ts [options]

Measures the gateway against a direct call to a fake upstream, pinned on this machine's two cores.
A full run takes about 10 minutes (BENCH_QUICK=1: about 3.5). It builds dist/ first.

Options:
  -h, --help       print this and exit
  --out <file>     write the results JSON here (default: BENCH_OUT, else the untracked
                   benchmarks/results/run-<UTC time>.json)
  --save-latest    also write the tracked summary benchmarks/results/latest.json and
                   render docs/benchmarks.md's results from it
  --no-build       use the existing dist/ instead of building it first

Environment: BENCH_QUICK=1, BENCH_REPS=N, BENCH_ONLY=id1,id2, BENCH_REDIS_URL, BENCH_NO_REDIS=1,
BENCH_OUT, BENCH_CPU_PROF=<dir>, BENCH_QUIET_WAIT_S=N, BENCH_HARD_LIMIT_S=N, BENCH_NO_WRK=1
(see benchmarks/README.md).
Scenario ids: ${SCENARIOS.map((s) => s.id).join(', ')}
`;

export interface CliOptions {
  out: string | undefined;
  saveLatest: boolean;
  build: boolean;
}

/**
 * Reads the command line and BENCH_ONLY before anything starts: `help` for -h/--help, `error` (with
 * a message) for an unknown argument or scenario id.
 */
export function readCli(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): { kind: 'help' } | { kind: 'error'; message: string } | { kind: 'run'; options: CliOptions } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        help: { type: 'boolean', short: 'h' },
        out: { type: 'string' },
        'save-latest': { type: 'boolean' },
        'no-build': { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    return { kind: 'error', message: e instanceof Error ? e.message : String(e) };
  }
  if (values.help) return { kind: 'help' };
  if (values.out === '') return { kind: 'error', message: '--out needs a file name' };
  const ids = new Set(SCENARIOS.map((s) => s.id));
  const unknown = (env.BENCH_ONLY ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x && !ids.has(x));
  if (unknown.length) return { kind: 'error', message: `BENCH_ONLY: unknown scenario id ${unknown.map((x) => `"${x}"`).join(', ')}` };
  return { kind: 'run', options: { out: values.out ?? (env.BENCH_OUT || undefined), saveLatest: values['save-latest'] === true, build: values['no-build'] !== true } };
}

/** The default results file: untracked (benchmarks/results/run-*.json is gitignored), one per run. */
function defaultOutFile(startedAt: number): string {
  return path.join(BENCH_DIR, 'results', `run-${new Date(startedAt).toISOString().slice(0, 19).replace(/:/g, '-')}.json`);
}

/** A path relative to the repository when it is inside it, else absolute. */
function shortPath(f: string): string {
  const r = path.relative(REPO_ROOT, f);
  return r.startsWith('..') || path.isAbsolute(r) ? f : r;
}

/**
 * The commit the measured code was built from, with `+dirty` when the work tree had changes, so a
 * results table can say what it measured; undefined outside a git checkout.
 */
export function gitCommit(): string | undefined {
  try {
    const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head}+dirty` : head;
  } catch {
    return undefined;
  }
}

/** Builds dist/ with the project's TypeScript (what `npm run build` does), output shown. */
function buildGateway(): void {
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, stdio: 'inherit' });
}

// ---------------------------------------------------------------------------------------------
// Orchestration

async function main(opts: CliOptions, argv: string[]): Promise<void> {
  if (opts.build) buildGateway();
  const t0 = Date.now();
  const OUT_FILE = path.resolve(opts.out ?? defaultOutFile(t0));
  const outFiles = opts.saveLatest && OUT_FILE !== LATEST_FILE ? [OUT_FILE, LATEST_FILE] : [OUT_FILE];
  installCleanup(CFG.hardLimitS * 1000);
  const log = (msg: string): void => void process.stdout.write(`${msg}\n`);
  const machine = machineInfo();
  const pinned = pinSelf(CFG.cpu.load);
  if (!pinned) log('! could not pin the orchestrator with taskset; figures will be noisier');
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'main.js'))) throw new Error('dist/main.js missing: run `npx tsc -p tsconfig.build.json` (the bench does unless --no-build)');
  if (!findWrk()) log(`! ${WRK_INSTALL_HINT}\n! Falling back to autocannon for the fixed-rate latency figures (millisecond resolution only).`);

  log(`Sluice benchmark${QUICK ? ' (quick)' : ''}: ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}`);
  log(`gateway on core ${CFG.cpu.gateway}; upstream, load generators and this orchestrator on core ${CFG.cpu.load}; ${CFG.reps} interleaved reps\n`);

  const commands: Record<string, string> = {};
  const noise: { label: string; foreignCores: number; coreBusy: number[]; wallS: number }[] = [];
  const quietWaits: { label: string; waitedS: number; foreignCores: number }[] = [];
  const upPort = await freePort();
  const upstream = await startProcess({
    name: 'upstream',
    cpu: CFG.cpu.load,
    command: process.execPath,
    args: ['--import', 'tsx', path.relative(REPO_ROOT, path.join(BENCH_DIR, 'upstream.ts'))],
    env: { UPSTREAM_PORT: String(upPort) },
    port: upPort,
  });
  commands.upstream = upstream.commandLine;

  const cpuProfDir = process.env.BENCH_CPU_PROF;
  let gatewayCount = 0;
  const startGateway = async (env: Record<string, string> = {}, name = 'gateway', extraNodeArgs: string[] = []): Promise<ManagedProcess> => {
    const port = await freePort();
    const nodeArgs = [...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []), ...extraNodeArgs];
    const p = await startProcess({
      name,
      cpu: CFG.cpu.gateway,
      command: process.execPath,
      args: [...nodeArgs, 'dist/main.js', 'serve', '--port', String(port), '--host', '127.0.0.1'],
      env: { GATEWAY_API_KEYS: CFG.apiKey, GATEWAY_TRUSTED_HOSTS: '127.0.0.1', LOG_LEVEL: CFG.logLevel, ...env },
      port,
      discardStdout: true, // request logs go to /dev/null, as when shipped to a collector
    });
    commands[gatewayCount++ === 0 ? 'gateway' : name] = `${p.commandLine.replace(CFG.apiKey, '<key>')} >/dev/null`;
    return p;
  };
  const gateway = await startGateway();
  /** Reference contenders (the minimal proxy) and the load-core holder while they run; their CPU is not noise. */
  const auxProcs = new Set<ManagedProcess>();
  /** Records `p`'s command line and counts it among `auxProcs` until it exits. */
  const addAux = (p: ManagedProcess): void => {
    commands[p.opts.name] = p.commandLine;
    auxProcs.add(p);
    void p.exited.then(() => auxProcs.delete(p));
  };
  const startMinimalProxy = async (): Promise<ManagedProcess> => {
    const port = await freePort();
    const p = await startProcess({
      name: 'minimal-proxy',
      cpu: CFG.cpu.gateway,
      command: process.execPath,
      args: ['--import', 'tsx', path.relative(REPO_ROOT, path.join(BENCH_DIR, 'minimal-proxy.ts'))],
      env: { PROXY_PORT: String(port), PROXY_UPSTREAM: `http://127.0.0.1:${upPort}` },
      port,
    });
    addAux(p);
    const r = await fetchOnce({
      url: `http://127.0.0.1:${port}/v1/chat/completions`,
      method: 'POST',
      headers: { authorization: 'Bearer sk-bench', 'content-type': 'application/json' },
      body: CHAT_BODY,
    });
    if (r.status !== 200 || !r.body.includes('"chat.completion"')) {
      await p.stop(1000);
      throw new Error(`minimal-proxy smoke request failed: ${r.status} ${r.body.slice(0, 300)}`);
    }
    return p;
  };
  /**
   * A process that keeps the load core from idling: a busy loop under SCHED_IDLE (`chrt --idle`), so
   * it runs only when nothing else on that core wants to, and takes next to no time from the upstream
   * and the load generator. It exits by itself once this process is gone (its parent changes), so a
   * killed run cannot leave the core held for the next. Undefined when `chrt` is missing or refuses.
   * Its CPU is not noise.
   */
  const holdLoadCore = async (): Promise<ManagedProcess | undefined> => {
    if (!onPath('chrt')) return undefined;
    const loop = "const parent = process.ppid; process.stdout.write('holding\\n'); for (let i = 1; ; i++) if (i % 1e8 === 0 && process.ppid !== parent) process.exit(0);";
    let p: ManagedProcess;
    try {
      p = await startProcess({ name: 'load-core holder', cpu: CFG.cpu.load, command: 'chrt', args: ['--idle', '0', process.execPath, '-e', loop], readyLine: /holding/ });
    } catch (e) {
      log(`  ! could not hold the load core: ${(e as Error).message.split('\n')[0]}`);
      return undefined;
    }
    addAux(p);
    return p;
  };
  const otherPids = (measured?: ManagedProcess): Record<string, number> => {
    const out: Record<string, number> = {};
    let i = 0;
    for (const p of [gateway, ...auxProcs]) if (p !== measured && p.alive) out[`other${i++}`] = p.pid;
    return out;
  };
  if (cpuProfDir) log(`! BENCH_CPU_PROF: gateway runs under --cpu-prof (profiles in ${cpuProfDir}); figures are not representative`);

  const upstreamBase = (prefix = ''): string => `http://127.0.0.1:${upPort}${prefix}/v1`;
  /** A chat request as a client of the gateway sends it (provider + custom_host headers) to `proc`. */
  const gatewayShaped = (name: string, proc: ManagedProcess, customHost: string, body?: string): HttpTarget => ({
    name,
    url: `http://127.0.0.1:${proc.port}/v1/chat/completions`,
    method: 'POST',
    headers: {
      'x-gateway-api-key': CFG.apiKey,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': customHost,
      authorization: 'Bearer sk-bench',
      'content-type': 'application/json',
    },
    body: body ?? CHAT_BODY,
    proc,
    wrkArgs: ['gateway', customHost, CFG.apiKey],
  });
  const ctx: BenchContext = {
    cfg: CFG,
    upstream,
    gateway,
    gatewayTarget: (o = {}) => gatewayShaped(o.name ?? 'gateway', o.gateway ?? gateway, upstreamBase(o.upstreamPrefix), o.body),
    directTarget: (o = {}) => ({
      name: o.name ?? 'direct',
      url: `${upstreamBase(o.upstreamPrefix)}/chat/completions`,
      method: 'POST',
      headers: { authorization: 'Bearer sk-bench', 'content-type': 'application/json' },
      body: o.body ?? CHAT_BODY,
      proc: upstream,
      wrkArgs: ['direct', '', ''],
    }),
    upstreamConfig: (prefix = '') => ({ provider: 'openai', custom_host: upstreamBase(prefix), api_key: 'sk-bench' }),
    configTarget: (config, o = {}) => {
      const proc = o.gateway ?? gateway;
      const json = JSON.stringify(config);
      return {
        name: o.name ?? 'gateway',
        url: `http://127.0.0.1:${proc.port}/v1/chat/completions`,
        method: 'POST',
        headers: {
          'x-gateway-api-key': CFG.apiKey,
          'x-gateway-config': json,
          authorization: 'Bearer sk-bench',
          'content-type': 'application/json',
        },
        body: o.body ?? CHAT_BODY,
        proc,
        wrkArgs: ['config', '', CFG.apiKey],
        wrkHeaders: [`x-gateway-config: ${json}`],
      };
    },
    startGateway,
    startMinimalProxy,
    holdLoadCore,
    // The gateway's request headers, so both contenders parse the same request; the proxy forwards
    // only content-type and authorization.
    proxyTarget: (proxy, o = {}) => gatewayShaped(o.name ?? 'proxy', proxy, upstreamBase(), o.body),
    otherPids,
    results: {},
    commands,
    log,
    quietGate: async (label) => {
      if (!(CFG.quietWaitS > 0)) return;
      const q = await waitForQuiet([gateway.pid, upstream.pid, ...Object.values(otherPids(gateway))], { maxWaitS: CFG.quietWaitS, thresholdCores: 0.1 });
      quietWaits.push({ label, ...q });
      if (q.waitedS > 1) log(`  … waited ${q.waitedS.toFixed(0)} s for other processes to go quiet (now ${q.foreignCores.toFixed(2)} cores)`);
    },
    recordNoise: (label, m) => {
      noise.push({ label, foreignCores: m.foreignCores, coreBusy: m.coreBusy, wallS: m.wallS });
      if (m.foreignCores > 0.1) log(`  ! ${label}: other processes used ${m.foreignCores.toFixed(2)} cores meanwhile (figures disturbed)`);
      return m.foreignCores;
    },
  };

  // Smoke check: both paths answer 200 with a chat.completion before anything is measured.
  for (const t of [ctx.gatewayTarget(), ctx.directTarget()]) {
    const r = await fetchOnce(t);
    if (r.status !== 200 || !r.body.includes('"chat.completion"')) throw new Error(`${t.name} smoke request failed: ${r.status} ${r.body.slice(0, 500)}`);
  }

  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
  const selected = SCENARIOS.filter((s) => (only ? only.includes(s.id) : !(QUICK && s.skipInQuick)));
  for (const s of selected) {
    log(`▶ ${s.title}`);
    const ts = Date.now();
    ctx.results[s.id] = await s.run(ctx);
    log(`  (${((Date.now() - ts) / 1000).toFixed(0)} s)\n`);
  }
  const gatewayRssEnd = readRssMb(gateway.pid);
  await stopAll();

  // ---- Report
  const out: string[] = [];
  out.push('='.repeat(100));
  out.push(`RESULTS — medians of ${CFG.reps} interleaved reps${QUICK ? ' (QUICK run)' : ''}; gateway LOG_LEVEL=${CFG.logLevel}, stdout → /dev/null`);
  out.push(`machine: ${machine.nproc} cores (${machine.cpuModel}), Node ${machine.node}, ${machine.platform}; wrk: ${machine.wrk ?? 'not installed'}`);
  out.push('='.repeat(100));
  for (const s of selected) {
    const r = ctx.results[s.id]!;
    out.push(`\n${s.title}`);
    if (r.rows.length) {
      const cell = (x: number | string | undefined, digits?: number): string => (typeof x === 'number' ? fmt(x, digits) : (x ?? '-'));
      const withProxy = r.rows.some((row) => row.proxy !== undefined);
      out.push(
        withProxy
          ? table(
              ['metric', 'unit', 'gateway', 'minimal proxy', 'direct', 'gateway vs direct', 'proxy vs direct'],
              r.rows.map((row) => [row.metric, row.unit, cell(row.gateway, row.digits), cell(row.proxy, row.digits), cell(row.direct, row.digits), row.compare ?? '', row.proxyCompare ?? '']),
            )
          : table(
              ['metric', 'unit', 'gateway', 'direct', 'gateway vs direct'],
              r.rows.map((row) => [row.metric, row.unit, cell(row.gateway, row.digits), cell(row.direct, row.digits), row.compare ?? '']),
            ),
      );
    }
    for (const t of r.tables ?? []) {
      if (t.title) out.push(`${r.rows.length ? '\n' : ''}${t.title}`);
      out.push(table(t.header, t.rows));
    }
    for (const n of r.notes ?? []) out.push(`  note: ${n}`);
  }
  const checks = selected.flatMap((s) => ctx.results[s.id]!.checks ?? []);
  if (checks.length) {
    out.push('\nTargets');
    out.push(table(['target', 'measured', 'met'], checks.map((c) => [c.target, c.value, c.met ? 'yes' : 'NO'])));
  }
  const reference = selected.flatMap((s) => ctx.results[s.id]!.reference ?? []);
  if (reference.length) {
    out.push('\nReference: the minimal undici pass-through proxy, same run (not a target)');
    out.push(table(['figure', 'measured'], reference.map((x) => [x.figure, x.value])));
  }
  const foreign = noise.map((n) => n.foreignCores).filter(Number.isFinite);
  const loadEnd = os.loadavg();
  if (foreign.length) {
    const disturbed = foreign.filter((f) => f > 0.1).length;
    out.push(
      `\nNoise: other processes on the machine used ${median(foreign).toFixed(2)} cores during the measured runs (median; max ${Math.max(...foreign).toFixed(2)}); ` +
        `${disturbed} of ${foreign.length} runs above 0.1 core. Load average at start ${(machine.loadavgAtStart as number[]).join(' ')}, at end ${loadEnd.map((x) => x.toFixed(2)).join(' ')}.` +
        (disturbed ? ' Disturbed runs inflate latencies and lower req/s; CPU µs/request is the figure least affected. Re-run on a quiet machine (or with BENCH_QUIET_WAIT_S=20) to confirm latencies.' : ''),
    );
  }
  const elapsedS = (Date.now() - t0) / 1000;
  out.push(`\nTotal run time ${elapsedS.toFixed(0)} s. Full figures: ${outFiles.map(shortPath).join(' and ')}`);
  log(out.join('\n'));

  const json = {
    startedAt: new Date(t0).toISOString(),
    commit: gitCommit(),
    elapsedS: round(elapsedS, 1),
    quick: QUICK,
    config: CFG,
    machine,
    layout: { gatewayCore: CFG.cpu.gateway, loadCore: CFG.cpu.load, orchestratorPinned: pinned },
    commands: {
      bench: `${QUICK ? 'BENCH_QUICK=1 ' : ''}npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
      ...commands,
      throughput: `autocannon programmatic API: POST, ${CFG.throughput.connections} connections, pipelining 1, ${CFG.throughput.durationS} s per rep, in the orchestrator pinned to core ${CFG.cpu.load}`,
      streams: `undici request() with Agent{connections:1, keep-alive}, sequential, ${CFG.streams.chunks} chunks, interval 0 and ${CFG.streams.pacedIntervalMs} ms`,
      cpu: '/proc/<pid>/stat utime+stime (CLK_TCK) before/after each run ÷ requests; RSS from /proc/<pid>/status VmRSS',
    },
    gatewayRssEndMb: round(gatewayRssEnd, 1),
    loadavgAtEnd: loadEnd.map((x) => round(x, 2)),
    noise,
    quietWaits,
    checks,
    reference,
    scenarios: Object.fromEntries(selected.map((s) => [s.id, { title: s.title, ...ctx.results[s.id] }])),
  };
  const text = `${JSON.stringify(json, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? round(v, 4) : v), 2)}\n`;
  for (const f of outFiles) {
    mkdirSync(path.dirname(f), { recursive: true });
    writeFileSync(f, text);
  }
  // The docs' results table is rendered from the tracked summary, never typed: keep the two together.
  if (opts.saveLatest) writeOrCheck(path.join(REPO_ROOT, BENCH_PAGE), BENCH_MARKER, () => renderBenchTable(readResults(LATEST_FILE)), ['--write']);
  process.exit(0);
}

// Run only when executed (not when imported for readCli or USAGE).
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const argv = process.argv.slice(2);
  const cli = readCli(argv);
  if (cli.kind === 'help') {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (cli.kind === 'error') {
    process.stderr.write(`bench: ${cli.message}\n\n${USAGE}`);
    process.exit(2);
  }
  main(cli.options, argv).catch(async (e: unknown) => {
    process.stderr.write(`\nbenchmark failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    await stopAll(1500);
    process.exit(1);
  });
}

