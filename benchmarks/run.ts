/**
 * The benchmark: CPU per request of the gateway against a minimal Node proxy (and, with --against,
 * against the gateway built from another git ref), one scenario after another, measured with wrk.
 * Method and figures: docs/benchmarks.md.
 *
 *   npm run bench -- --help
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { buildDist, buildRef, headCommit } from './against.js';
import { BENCH_DIR, REPO_ROOT, cpuSeconds, freePort, installCleanup, machineInfo, median, onExit, pinSelf, runWrk, spread, startProc, stopAll, table, type Proc } from './lib.js';
import { API_KEY, CHAT_PATH, type GatewayContext, type Request, type Scenario } from './scenario.js';
import { SCENARIOS } from './scenarios/index.js';
import { BENCH_MARKER, BENCH_PAGE, readResults, renderBenchTable } from '../scripts/bench-table.js';
import { writeOrCheck } from '../scripts/markers.js';

export const LATEST_FILE = path.join(BENCH_DIR, 'results', 'latest.json');
/** The proxies run on the first core; the fake upstream, wrk and this process on the second. */
const PROXY_CORE = '0';
const LOAD_CORE = '1';
const CONNECTIONS = 64;
/** The plain request's target (the throughput scenario): at most this many times the minimal proxy's CPU. */
export const PLAIN_RATIO_TARGET = 2.0;

export const USAGE = `Usage: npm run bench [-- options]

Gateway CPU per request against a minimal Node proxy, per scenario, with wrk at ${CONNECTIONS} connections;
each proxy pinned to core ${PROXY_CORE}, the fake upstream and wrk to core ${LOAD_CORE}; interleaved repetitions.

Options:
  --against <ref>    also build <ref> in a temporary git worktree and measure its gateway, interleaved
  --only <ids>       run only these scenarios (comma-separated)
  --reps <n>         repetitions per contender (default 2)
  --quick            3 s runs after a 1 s warm-up (default 10 s after 3 s)
  --save-latest      write benchmarks/results/latest.json and render docs/benchmarks.md from it
  --out <file>       also write the results JSON here
  --no-build         use the existing dist/ instead of building it
  -h, --help         print this and exit
Scenarios: ${SCENARIOS.map((s) => s.id).join(', ')}
`;

export interface CliOptions {
  scenarios: Scenario[];
  against: string | undefined;
  reps: number;
  quick: boolean;
  saveLatest: boolean;
  out: string | undefined;
  build: boolean;
}

export type Cli = { kind: 'help' } | { kind: 'error'; message: string } | { kind: 'run'; options: CliOptions };

/** The command line, read before anything is built or started. */
export function readCli(argv: string[]): Cli {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        against: { type: 'string' },
        only: { type: 'string' },
        reps: { type: 'string' },
        quick: { type: 'boolean' },
        'save-latest': { type: 'boolean' },
        out: { type: 'string' },
        'no-build': { type: 'boolean' },
      },
    }));
  } catch (e) {
    return { kind: 'error', message: (e as Error).message };
  }
  if (values.help) return { kind: 'help' };
  const reps = Number(values.reps ?? 2);
  if (!Number.isInteger(reps) || reps < 1) return { kind: 'error', message: '--reps must be a positive integer' };
  if (values.against === '') return { kind: 'error', message: '--against needs a git ref' };
  const ids = values.only?.split(',').map((x) => x.trim()).filter(Boolean);
  const unknown = ids?.filter((id) => !SCENARIOS.some((s) => s.id === id)) ?? [];
  if (unknown.length) return { kind: 'error', message: `unknown scenario ${unknown.map((x) => `"${x}"`).join(', ')}` };
  return {
    kind: 'run',
    options: {
      scenarios: ids ? SCENARIOS.filter((s) => ids.includes(s.id)) : SCENARIOS,
      against: values.against,
      reps,
      quick: values.quick === true,
      saveLatest: values['save-latest'] === true,
      out: values.out,
      build: values['no-build'] !== true,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Figures and the summary table (pure, tested)

/** One wrk run against one contender. */
export interface Rep {
  cpuUsPerReq: number;
  rps: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
}
/** The contenders: the minimal proxy, the gateway under test, and the --against ref's gateway. */
export type ContenderId = 'proxy' | 'current' | 'ref';
export interface ScenarioResult {
  id: string;
  title: string;
  reps: Partial<Record<ContenderId, Rep[]>>;
}

const us = (reps: Rep[]): string => (reps.length === 0 ? '—' : `${median(reps.map((r) => r.cpuUsPerReq)).toFixed(1)} ±${(spread(reps.map((r) => r.cpuUsPerReq)) * 100).toFixed(0)}%`);

/** CPU per request of a ÷ b, rep by rep (the reps of one round pair up). */
const ratios = (a: Rep[], b: Rep[]): number[] => a.map((x, i) => x.cpuUsPerReq / b[i]!.cpuUsPerReq);

/** a ÷ b rep by rep: the median, and the range in parentheses. */
export function ratioCell(a: Rep[], b: Rep[]): string {
  if (a.length === 0 || b.length === 0) return '—';
  const rs = ratios(a, b);
  return `${median(rs).toFixed(2)}× (${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)})`;
}

/** CPU µs per request of each contender (median ± half its range) and their ratios, a row per scenario. */
export function summaryTable(results: ScenarioResult[]): { header: string[]; rows: string[][] } {
  const against = results.some((r) => r.reps.ref);
  const header = against
    ? ['scenario', 'proxy µs/req', 'ref µs/req', 'current µs/req', 'current/ref', 'ref/proxy', 'current/proxy']
    : ['scenario', 'proxy µs/req', 'gateway µs/req', 'gateway/proxy'];
  const rows = results.map(({ id, reps: { proxy = [], current = [], ref = [] } }) =>
    against ? [id, us(proxy), us(ref), us(current), ratioCell(current, ref), ratioCell(ref, proxy), ratioCell(current, proxy)] : [id, us(proxy), us(current), ratioCell(current, proxy)],
  );
  return { header, rows };
}

/** The targets this run can check: the plain request against the minimal proxy. */
export function checks(results: ScenarioResult[]): { target: string; value: string; met: boolean }[] {
  const plain = results.find((r) => r.id === 'throughput');
  if (!plain?.reps.current || !plain.reps.proxy) return [];
  const ratio = median(ratios(plain.reps.current, plain.reps.proxy));
  return [{ target: `The plain request (throughput) costs ≤ ${PLAIN_RATIO_TARGET.toFixed(1)}× the minimal proxy's CPU`, value: `${ratio.toFixed(2)}×`, met: ratio <= PLAIN_RATIO_TARGET }];
}

/** Per-rep figures of a scenario, one line per contender, for the notes. */
export function repNotes(r: ScenarioResult): string[] {
  return (Object.entries(r.reps) as [ContenderId, Rep[]][]).map(
    ([id, reps]) =>
      `${id}: CPU µs/req ${reps.map((x) => x.cpuUsPerReq.toFixed(1)).join(' / ')}; req/s ${reps.map((x) => x.rps.toFixed(0)).join(' / ')}; p50 ${reps.map((x) => x.p50Ms.toFixed(2)).join(' / ')} ms`,
  );
}

// ---------------------------------------------------------------------------------------------
// The run

interface Contender {
  id: ContenderId;
  proc: Proc;
}

const log = (s: string): void => void process.stdout.write(`${s}\n`);

/** The contenders of rep n, starting at a different one each rep, so none always runs first. */
export const rotated = <T>(xs: readonly T[], rep: number): T[] => xs.map((_, i) => xs[(i + rep - 1) % xs.length]!);

/**
 * The path a contender is sent the request on: the scenario's for a gateway; the minimal proxy
 * forwards what it gets, so it always makes the chat completions exchange with the upstream.
 */
const pathFor = (id: ContenderId, req: Request): string => (id === 'proxy' ? CHAT_PATH : (req.path ?? CHAT_PATH));

async function send(port: number, req: Request): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const res = await request(`http://127.0.0.1:${port}${pathFor('current', req)}`, { method: 'POST', headers: req.headers, body: req.body });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

async function measure(c: Contender, req: Request, durationS: number): Promise<Rep> {
  const cpu0 = cpuSeconds(c.proc.pid);
  const w = await runWrk({ ...req, url: `http://127.0.0.1:${c.proc.port}${pathFor(c.id, req)}` }, { connections: CONNECTIONS, durationS, cpu: LOAD_CORE });
  const cpu = cpuSeconds(c.proc.pid) - cpu0;
  if (w.errors > w.requests / 100) throw new Error(`${c.id}: ${w.errors} errors or non-2xx answers in ${w.requests} requests`);
  return { cpuUsPerReq: (cpu / w.requests) * 1e6, rps: w.requests / w.durationS, errors: w.errors, p50Ms: w.p50Ms, p99Ms: w.p99Ms };
}

interface Run {
  opts: CliOptions;
  tmp: string;
  upstream: string;
  proxy: Contender;
  /** The builds to measure: this checkout's, then the ref's. */
  builds: { id: ContenderId; root: string }[];
  commands: Record<string, string>;
}

async function startGateway(run: Run, s: Scenario, slot: number): Promise<{ proc: Proc; ctx: GatewayContext }> {
  const build = run.builds[slot]!;
  const ctx: GatewayContext = { upstream: run.upstream, slot, dir: path.join(run.tmp, `${s.id}-${build.id}`) };
  mkdirSync(ctx.dir, { recursive: true });
  const port = await freePort();
  const proc = await startProc({
    name: `gateway (${build.id})`,
    cpu: PROXY_CORE,
    command: process.execPath,
    args: [path.join(build.root, 'dist', 'main.js'), 'serve', '--port', String(port), '--host', '127.0.0.1'],
    cwd: build.root,
    env: { GATEWAY_API_KEYS: API_KEY, GATEWAY_TRUSTED_HOSTS: '127.0.0.1', ...(await s.gatewayEnv?.(ctx)) },
    port,
    stdoutFile: path.join(ctx.dir, 'gateway.log'),
  });
  run.commands[`gateway (${build.id})`] ??= proc.commandLine.replaceAll(API_KEY, '<key>').replaceAll(run.tmp, '$TMP');
  return { proc, ctx };
}

async function runScenario(run: Run, s: Scenario): Promise<ScenarioResult> {
  const { reps, quick } = run.opts;
  const req = s.request(run.upstream);
  const gateways = [];
  try {
    for (let slot = 0; slot < run.builds.length; slot++) gateways.push(await startGateway(run, s, slot));
    const serving: Contender[] = [];
    for (const [slot, g] of gateways.entries()) {
      await send(g.proc.port, req);
      const a = await send(g.proc.port, req);
      const wrong = a.status !== 200 ? `status ${a.status}: ${a.body.slice(0, 300)}` : await s.check?.(a, g.ctx);
      const id = run.builds[slot]!.id;
      // The ref may predate the scenario's feature: it is left out of this scenario, saying so.
      if (wrong && id === 'ref') log(`  ref left out of ${s.id}: its answer is wrong: ${wrong.slice(0, 120)}`);
      else if (wrong) throw new Error(`${s.id}: the ${id} gateway's answer is wrong: ${wrong}`);
      else serving.push({ id, proc: g.proc });
    }
    const contenders: Contender[] = [run.proxy, ...serving].reverse();
    for (const c of contenders) await measure(c, req, quick ? 1 : 3);
    const out: ScenarioResult = { id: s.id, title: s.title, reps: {} };
    for (let rep = 1; rep <= reps; rep++) {
      for (const c of rotated(contenders, rep)) {
        const r = await measure(c, req, quick ? 3 : 10);
        (out.reps[c.id] ??= []).push(r);
        log(`  rep ${rep} ${c.id.padEnd(7)} ${r.cpuUsPerReq.toFixed(1).padStart(7)} µs/req  ${r.rps.toFixed(0).padStart(6)} req/s${r.errors ? `  ! ${r.errors} errors` : ''}`);
      }
    }
    return out;
  } finally {
    for (const g of gateways) {
      await g.proc.stop();
      await s.cleanup?.(g.ctx);
    }
  }
}

/** The fake upstream and the minimal proxy, up for the whole run. */
async function startShared(quick: boolean): Promise<{ upstream: string; proxy: Contender; commands: Record<string, string> }> {
  const upPort = await freePort();
  const upstream = await startProc({ name: 'upstream', cpu: LOAD_CORE, command: process.execPath, args: ['--import', 'tsx', 'benchmarks/upstream.ts'], env: { UPSTREAM_PORT: String(upPort) }, port: upPort });
  const proxyPort = await freePort();
  const proxy = await startProc({
    name: 'minimal proxy',
    cpu: PROXY_CORE,
    command: process.execPath,
    args: ['--import', 'tsx', 'benchmarks/minimal-proxy.ts'],
    env: { PROXY_PORT: String(proxyPort), PROXY_UPSTREAM: `http://127.0.0.1:${upPort}` },
    port: proxyPort,
  });
  const commands = {
    upstream: upstream.commandLine,
    'minimal proxy': proxy.commandLine,
    wrk: `taskset -c ${LOAD_CORE} wrk -t1 -c${CONNECTIONS} -d${quick ? 3 : 10}s -s benchmarks/wrk.lua <url> -- <headers>`,
  };
  return { upstream: `http://127.0.0.1:${upPort}`, proxy: { id: 'proxy', proc: proxy }, commands };
}

/** Prints the summary and the targets; writes the results JSON (and the docs' table with --save-latest). */
function report(run: Run, results: ScenarioResult[], meta: { t0: number; argv: string[]; ref?: { commit: string }; machine: ReturnType<typeof machineInfo> }): void {
  const { opts } = run;
  const summary = summaryTable(results);
  const elapsedS = Math.round((Date.now() - meta.t0) / 1000);
  log(`\nCPU µs per request: median of ${opts.reps} reps ± half their range; ratios rep by rep, median (range)\n`);
  log(table(summary.header, summary.rows));
  for (const c of checks(results)) log(`\n${c.met ? 'met' : 'NOT met'}: ${c.target}: ${c.value}`);
  log(`\n${elapsedS} s in all`);
  const json = {
    startedAt: new Date(meta.t0).toISOString(),
    commit: headCommit(),
    ...(meta.ref ? { against: { ref: opts.against, commit: meta.ref.commit } } : {}),
    quick: opts.quick,
    elapsedS,
    config: { reps: opts.reps, connections: CONNECTIONS, durationS: opts.quick ? 3 : 10, warmupS: opts.quick ? 1 : 3 },
    machine: meta.machine,
    commands: { bench: `npm run bench${meta.argv.length ? ` -- ${meta.argv.join(' ')}` : ''}`, ...run.commands },
    checks: checks(results),
    summary,
    scenarios: Object.fromEntries(results.map((r) => [r.id, { title: r.title, notes: repNotes(r), reps: r.reps }])),
  };
  const text = `${JSON.stringify(json, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 2)}\n`;
  for (const f of [...(opts.out ? [path.resolve(opts.out)] : []), ...(opts.saveLatest ? [LATEST_FILE] : [])]) writeFileSync(f, text);
  if (opts.saveLatest) writeOrCheck(path.join(REPO_ROOT, BENCH_PAGE), BENCH_MARKER, () => renderBenchTable(readResults(LATEST_FILE)), ['--write']);
}

async function main(opts: CliOptions, argv: string[]): Promise<void> {
  installCleanup();
  const t0 = Date.now();
  if (!pinSelf(LOAD_CORE)) log(`! could not pin this process to core ${LOAD_CORE} with taskset`);
  if (opts.build) buildDist(REPO_ROOT);
  const ref = opts.against ? buildRef(opts.against) : undefined;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-'));
  onExit(() => rmSync(tmp, { recursive: true, force: true }));
  const machine = machineInfo();
  log(`Sluice benchmark${opts.quick ? ' (quick)' : ''}: ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}, ${opts.reps} reps${ref ? `, against ${opts.against} (${ref.commit})` : ''}`);
  const run: Run = {
    opts,
    tmp,
    ...(await startShared(opts.quick)),
    builds: [{ id: 'current', root: REPO_ROOT }, ...(ref ? [{ id: 'ref' as const, root: ref.dir }] : [])],
  };
  const results: ScenarioResult[] = [];
  for (const s of opts.scenarios) {
    log(`▶ ${s.id}: ${s.title}`);
    results.push(await runScenario(run, s));
  }
  await stopAll();
  report(run, results, { t0, argv, ref, machine });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const argv = process.argv.slice(2);
  const cli = readCli(argv);
  if (cli.kind === 'help') process.stdout.write(USAGE);
  else if (cli.kind === 'error') {
    process.stderr.write(`bench: ${cli.message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    main(cli.options, argv).then(
      () => process.exit(0),
      async (e: unknown) => {
        process.stderr.write(`\nbenchmark failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
        await stopAll();
        process.exit(1);
      },
    );
  }
}
