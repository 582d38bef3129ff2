/**
 * `npm run experiment -- <file>`: runs a routing experiment declared in a YAML file and writes its
 * report (results.json, report.md, SVG charts). How to write one and read its report:
 * docs/experiments.md.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { buildDist, headCommit } from './against.js';
import { installCleanup, machineInfo, onExit, REPO_ROOT, stopAll } from './lib.js';
import { barSpec, cdfSpec, overTimeSpec, targetsSpec, toSvg } from './experiment/charts.js';
import { renderReport, type Results } from './experiment/report.js';
import { metricsFor, perRep, summarize, verdicts } from './experiment/results.js';
import { runAll } from './experiment/runner.js';
import { ExperimentFileError, loadExperiment, type Experiment } from './experiment/schema.js';

export const USAGE = `Usage: npm run experiment -- <file.yaml> [options]   (or: sluice experiment <file.yaml> [options])

Runs the routing configs of an experiment file against its fake providers and load, interleaved,
and writes results.json, report.md and SVG charts. docs/experiments.md describes the file and the report.

  npm run experiment -- --render <dir>   (report.md and the charts again, from <dir>/results.json)

Options:
  --out <dir>         where to write the report (default benchmarks/experiments/reports/<name>)
  --reps <n>          repetitions (default: the file's)
  --duration <s>      seconds of load per run (default: the file's load.duration_s)
  --no-build          use the existing dist/ instead of building it
  --gateway-source    run the gateway from src/ with tsx instead of dist/ (no build)
  -h, --help          print this and exit
`;

export interface ExperimentCli {
  file: string;
  out: string | undefined;
  reps: number | undefined;
  durationS: number | undefined;
  build: boolean;
  gateway: 'dist' | 'source';
}

export function readExperimentCli(argv: string[]): { kind: 'help' } | { kind: 'error'; message: string } | { kind: 'render'; dir: string } | { kind: 'run'; options: ExperimentCli } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { help: { type: 'boolean', short: 'h' }, render: { type: 'string' }, out: { type: 'string' }, reps: { type: 'string' }, duration: { type: 'string' }, 'no-build': { type: 'boolean' }, 'gateway-source': { type: 'boolean' } },
    });
  } catch (e) {
    return { kind: 'error', message: (e as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  if (values.render !== undefined) return positionals.length ? { kind: 'error', message: '--render takes a report directory, not an experiment file' } : { kind: 'render', dir: values.render };
  if (positionals.length !== 1) return { kind: 'error', message: 'give one experiment file' };
  const reps = values.reps === undefined ? undefined : Number(values.reps);
  if (reps !== undefined && (!Number.isInteger(reps) || reps < 1)) return { kind: 'error', message: '--reps must be a positive integer' };
  const durationS = values.duration === undefined ? undefined : Number(values.duration);
  if (durationS !== undefined && !(durationS > 0)) return { kind: 'error', message: '--duration must be a positive number of seconds' };
  const gateway = values['gateway-source'] ? 'source' : 'dist';
  return { kind: 'run', options: { file: positionals[0]!, out: values.out, reps, durationS, build: values['no-build'] !== true && gateway === 'dist', gateway } };
}

/** results.json, the SVG charts and report.md in `dir`. */
export async function writeReport(dir: string, r: Omit<Results, 'charts'>): Promise<Results> {
  mkdirSync(dir, { recursive: true });
  const metrics = metricsFor(r.runs);
  const charts: { file: string; title: string; spec: Parameters<typeof toSvg>[0] }[] = [
    { file: 'latency-cdf.svg', title: 'Latency CDF per config', spec: cdfSpec(r.runs, r.configs) },
    { file: 'over-time.svg', title: 'Success ratio and p99 over time, fault windows shaded', spec: overTimeSpec(r.runs, r.configs, r.experiment) },
    { file: 'targets.svg', title: 'Share of traffic per target over time', spec: targetsSpec(r.runs, r.configs, r.experiment) },
    { file: 'upstream-calls.svg', title: 'Upstream calls per client request', spec: barSpec(r.perRep.calls_per_request!, 'upstream calls per client request') },
    ...(metrics.some((m) => m.id === 'cost_per_request') ? [{ file: 'cost.svg', title: 'Cost per client request', spec: barSpec(r.perRep.cost_per_request!, 'cost per client request (USD)') }] : []),
  ];
  for (const c of charts) writeFileSync(path.join(dir, c.file), await toSvg(c.spec));
  const results: Results = { ...r, charts: charts.map(({ file, title }) => ({ file, title })) };
  const round = (_k: string, v: unknown): unknown => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1e6) / 1e6 : v);
  writeFileSync(path.join(dir, 'results.json'), `${JSON.stringify(results, round)}\n`);
  writeFileSync(path.join(dir, 'report.md'), renderReport(JSON.parse(JSON.stringify(results, round)) as Results));
  return results;
}

export async function runExperiment(o: ExperimentCli, argv: string[], progress: (s: string) => void): Promise<string> {
  const loaded = loadExperiment(o.file);
  const e: Experiment = { ...loaded, repetitions: o.reps ?? loaded.repetitions, load: { ...loaded.load, duration_s: o.durationS ?? loaded.load.duration_s } };
  const out = path.resolve(o.out ?? path.join(REPO_ROOT, 'benchmarks/experiments/reports', e.name));
  if (o.build) buildDist(REPO_ROOT);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'sluice-experiment-'));
  onExit(() => rmSync(tmp, { recursive: true, force: true }));
  const machine = machineInfo();
  const t0 = Date.now();
  progress(`experiment ${e.name}: ${Object.keys(e.configs).join(' vs ')}, ${e.repetitions} reps of ${e.load.duration_s} s\n`);
  const { runs, runOrder } = await runAll(e, { root: REPO_ROOT, tmp, gateway: o.gateway, progress });
  const configs = Object.keys(e.configs);
  const metrics = metricsFor(runs);
  const reps = perRep(runs, configs, metrics);
  await writeReport(out, {
    name: e.name,
    startedAt: new Date(t0).toISOString(),
    elapsedS: Math.round((Date.now() - t0) / 1000),
    commit: headCommit() ?? 'unknown',
    machine,
    command: `npm run experiment -- ${argv.map((a) => (path.isAbsolute(a) ? path.relative(REPO_ROOT, a) : a)).join(' ')}`,
    experiment: e,
    configs,
    runOrder,
    runs,
    summary: Object.fromEntries(configs.map((c) => [c, summarize(runs, c)])),
    perRep: reps,
    verdicts: verdicts(reps, metrics, e.seed),
  });
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const argv = process.argv.slice(2);
  const cli = readExperimentCli(argv);
  const err = (s: string): void => void process.stderr.write(s);
  if (cli.kind === 'help') process.stdout.write(USAGE);
  else if (cli.kind === 'render') {
    const { charts: _, ...results } = JSON.parse(readFileSync(path.join(cli.dir, 'results.json'), 'utf8')) as Results;
    void writeReport(cli.dir, results).then(() => process.stdout.write(`${path.join(cli.dir, 'report.md')}\n`));
  }
  else if (cli.kind === 'error') {
    err(`experiment: ${cli.message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    installCleanup();
    runExperiment(cli.options, argv, err).then(
      (dir) => {
        process.stdout.write(`${path.relative(process.cwd(), path.join(dir, 'report.md')) || dir}\n`);
        process.exit(0);
      },
      async (e: unknown) => {
        err(e instanceof ExperimentFileError ? `experiment: ${e.message}\n` : `\nexperiment failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
        await stopAll();
        process.exit(e instanceof ExperimentFileError ? 2 : 1);
      },
    );
  }
}
