/**
 * report.md from results.json's content: how it ran, the verdict per metric with its interval, the
 * per-config figures, the charts (SVG files beside it) and every repetition's values.
 */
import type { Experiment } from './schema.js';
import { metricsFor, type ConfigSummary, type MetricDef, type RunResult } from './results.js';
import type { Verdict } from './stats.js';

export interface Results {
  name: string;
  startedAt: string;
  elapsedS: number;
  commit: string;
  machine: { nproc: number; cpuModel: string; node: string; platform: string; loadavgAtStart: number[] };
  command: string;
  experiment: Experiment;
  configs: string[];
  /** The order the runs were made in: rep by rep, each rep starting at the next config. */
  runOrder: { rep: number; config: string }[];
  runs: RunResult[];
  summary: Record<string, ConfigSummary>;
  perRep: Record<string, Record<string, number[]>>;
  verdicts: Verdict[];
  charts: { file: string; title: string }[];
}

export const fmt = (x: number | null | undefined, digits: number): string => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits));
const signed = (x: number, digits: number): string => `${x >= 0 ? '+' : ''}${fmt(x, digits)}`;

export function verdictRow(v: Verdict, m: MetricDef): string[] {
  const diff = `${signed(v.interval.estimate, m.digits)} (${fmt(v.interval.low, m.digits)} to ${fmt(v.interval.high, m.digits)})`;
  const winner = v.winner ? `**${v.winner}**` : `no difference`;
  return [m.label, `${m.better} is better`, winner, `${v.best} − ${v.runnerUp}: ${diff}`];
}

const table = (header: string[], rows: string[][]): string => [header, header.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');

function setup(r: Results): string {
  const e = r.experiment;
  const l = e.load;
  const faults = Object.entries(e.providers).flatMap(([p, s]) =>
    s.faults.map((f) => `- \`${p}\`: ${f.kind} from ${f.start_s} s to ${f.end_s} s${f.kind === 'rate_limit' ? ` (429, Retry-After: ${f.retry_after_s})` : f.kind === 'brownout' ? ` (latency ×${f.latency_factor}, ${f.error_rate * 100}% 503)` : f.kind === 'outage' ? ` (${f.status ?? 'connection reset'})` : ''}`),
  );
  return [
    `${e.repetitions} repetitions × ${r.configs.length} configs (${r.configs.map((c) => `\`${c}\``).join(', ')}), interleaved; each run ${l.duration_s} s of open-model load at ${l.rate_per_s} requests/s`,
    `(${Math.round(l.stream_share * 100)}% streamed${l.prompts ? `, a Zipf(${l.prompts.zipf_s}) mix of ${l.prompts.distinct} prompts, ${Math.round(l.prompts.rewordings * 100)}% re-worded` : ''}), seed ${e.seed}, against a gateway started afresh for each run.`,
    `${r.elapsedS} s in all; commit \`${r.commit}\`; ${r.machine.nproc} cores, ${r.machine.cpuModel}, Node ${r.machine.node}; load average at start ${r.machine.loadavgAtStart.join(' / ')}.`,
    '',
    `Command: \`${r.command}\``,
    '',
    faults.length ? `Fault schedule (the same in every run):\n\n${faults.join('\n')}` : 'No fault windows.',
  ].join('\n');
}

function perConfig(r: Results): string {
  const priced = r.configs.some((c) => r.summary[c]!.costPerRequest !== null);
  const header = ['config', 'requests', 'success ratio', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'upstream calls / request', ...(priced ? ['cost / request (USD)'] : [])];
  const rows = r.configs.map((c) => {
    const s = r.summary[c]!;
    const l = s.latencyMs;
    return [c, String(s.requests), fmt(s.successRatio, 4), fmt(l.p50, 1), fmt(l.p90, 1), fmt(l.p99, 1), fmt(l.p999, 1), fmt(l.max, 1), fmt(s.callsPerRequest, 3), ...(priced ? [fmt(s.costPerRequest, 7)] : [])];
  });
  return table(header, rows);
}

function repetitions(r: Results, metrics: readonly MetricDef[]): string {
  const rows = metrics.flatMap((m) => r.configs.map((c) => [m.label, c, r.perRep[m.id]![c]!.map((x) => fmt(x, m.digits)).join(' / ')]));
  return table(['metric', 'config', 'rep 1 / rep 2 / …'], rows);
}

export function renderReport(r: Results): string {
  const metrics = metricsFor(r.runs);
  const verdictRows = r.verdicts.map((v) => verdictRow(v, metrics.find((m) => m.id === v.metric)!));
  return [
    `# ${r.name}`,
    '',
    r.experiment.description.trim(),
    '',
    '## How it ran',
    '',
    setup(r),
    '',
    '## Verdicts',
    '',
    'Per metric, the best config by its mean over repetitions against the runner-up: the mean of their paired',
    'difference (round by round) and its 95% bootstrap interval. When the interval holds zero the repetitions',
    'cannot tell them apart: "no difference". Latency figures are of successful requests only.',
    '',
    table(['metric', 'direction', 'winner', 'difference (95% interval)'], verdictRows),
    '',
    '## Per config, every repetition pooled',
    '',
    'Latency percentiles from the HDR histogram of successful requests (results.json keeps each histogram).',
    '',
    perConfig(r),
    '',
    '## Charts',
    '',
    ...r.charts.flatMap((c) => [`![${c.title}](${c.file})`, '']),
    '## Each repetition',
    '',
    repetitions(r, metrics),
    '',
    'Every request (arrival, status, latency, target, cache status, cost, upstream calls) is in `results.json`.',
    '',
  ].join('\n');
}
