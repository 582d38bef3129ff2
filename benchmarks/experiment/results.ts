/**
 * From the runs to the figures a report states: per repetition (one value per config and round,
 * what the verdicts compare), per config over every repetition (an HDR histogram of latencies), and
 * the verdicts. Pure: results.json holds its input, and test/benchmarks/experiment.test.ts recomputes
 * the report's numbers from it.
 */
import * as hdr from 'hdr-histogram-js';
import type { Outcome } from './load.js';
import { hash32, mulberry32 } from './random.js';
import { mean, quantile, verdict, type Verdict } from './stats.js';

export interface RunResult {
  config: string;
  rep: number;
  requests: Outcome[];
}

export interface MetricDef {
  id: string;
  label: string;
  better: 'lower' | 'higher';
  /** Digits shown in the report. */
  digits: number;
  of(requests: readonly Outcome[]): number;
}

const okMs = (rs: readonly Outcome[]): number[] => rs.filter((r) => r.ok).map((r) => r.ms);

export const METRICS: readonly MetricDef[] = [
  { id: 'success_ratio', label: 'success ratio', better: 'higher', digits: 4, of: (rs) => rs.filter((r) => r.ok).length / rs.length },
  { id: 'p50_ms', label: 'p50 latency of successes (ms)', better: 'lower', digits: 1, of: (rs) => quantile(okMs(rs), 0.5) },
  { id: 'p99_ms', label: 'p99 latency of successes (ms)', better: 'lower', digits: 1, of: (rs) => quantile(okMs(rs), 0.99) },
  { id: 'calls_per_request', label: 'upstream calls per client request', better: 'lower', digits: 3, of: (rs) => mean(rs.map((r) => r.calls)) },
  { id: 'cost_per_request', label: 'cost per client request (USD)', better: 'lower', digits: 7, of: (rs) => mean(rs.map((r) => r.cost ?? 0)) },
];

/** The metrics that apply: cost only where some answer had a price. */
export const metricsFor = (runs: readonly RunResult[]): MetricDef[] =>
  METRICS.filter((m) => m.id !== 'cost_per_request' || runs.some((r) => r.requests.some((q) => q.cost !== null)));

/** metric → config → its value in each repetition, in round order. */
export function perRep(runs: readonly RunResult[], configs: readonly string[], metrics: readonly MetricDef[]): Record<string, Record<string, number[]>> {
  const reps = Math.max(...runs.map((r) => r.rep));
  return Object.fromEntries(
    metrics.map((m) => [
      m.id,
      Object.fromEntries(configs.map((c) => [c, Array.from({ length: reps }, (_, i) => {
        const run = runs.find((r) => r.config === c && r.rep === i + 1);
        return run ? m.of(run.requests) : NaN;
      })])),
    ]),
  );
}

export interface ConfigSummary {
  requests: number;
  ok: number;
  successRatio: number;
  /** Percentiles of successful requests' latency (ms), from the HDR histogram of every repetition. */
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number };
  callsPerRequest: number;
  costPerRequest: number | null;
  /** The histogram (µs), hdr-histogram-js compressed base64. */
  hdr: string;
}

export function summarize(runs: readonly RunResult[], config: string): ConfigSummary {
  const rs = runs.filter((r) => r.config === config).flatMap((r) => r.requests);
  const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
  for (const r of rs) if (r.ok) h.recordValue(Math.max(1, Math.round(r.ms * 1000)));
  const at = (p: number): number => (h.totalCount ? h.getValueAtPercentile(p) / 1000 : NaN);
  const ok = rs.filter((r) => r.ok).length;
  const priced = rs.some((r) => r.cost !== null);
  const out: ConfigSummary = {
    requests: rs.length,
    ok,
    successRatio: ok / rs.length,
    latencyMs: { p50: at(50), p90: at(90), p99: at(99), p999: at(99.9), max: h.totalCount ? h.maxValue / 1000 : NaN },
    callsPerRequest: mean(rs.map((r) => r.calls)),
    costPerRequest: priced ? mean(rs.map((r) => r.cost ?? 0)) : null,
    hdr: hdr.encodeIntoCompressedBase64(h),
  };
  h.destroy();
  return out;
}

/** The winner of each metric, or none, with the interval; the bootstrap's RNG is seeded by the experiment's seed. */
export function verdicts(reps: Record<string, Record<string, number[]>>, metrics: readonly MetricDef[], seed: number): Verdict[] {
  return metrics.map((m) => verdict(m.id, reps[m.id]!, m.better, mulberry32(hash32(seed, 'bootstrap', m.id))));
}
