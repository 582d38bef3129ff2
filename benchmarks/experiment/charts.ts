/**
 * The report's charts: vega-lite specs compiled to vega and rendered to SVG in Node, headless
 * (`view.toSVG()`, no browser, no canvas).
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Experiment } from './schema.js';
import type { RunResult } from './results.js';
import { quantile } from './stats.js';

export async function toSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

const WIDTH = 560;
const base = { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', background: 'white', config: { font: 'sans-serif', legend: { labelLimit: 320 } } } as const;

/** The latency CDF of successful requests per config (every repetition), on a log scale. */
export function cdfSpec(runs: readonly RunResult[], configs: readonly string[]): TopLevelSpec {
  const values = configs.flatMap((config) => {
    const ms = runs.filter((r) => r.config === config).flatMap((r) => r.requests.filter((q) => q.ok).map((q) => q.ms)).sort((a, b) => a - b);
    const step = Math.max(1, Math.floor(ms.length / 300));
    return ms.flatMap((v, i) => (i % step === 0 || i === ms.length - 1 ? [{ config, ms: Math.max(v, 0.1), share: (i + 1) / ms.length }] : []));
  });
  return {
    ...base,
    title: 'Latency of successful requests, CDF',
    width: WIDTH,
    height: 300,
    data: { values },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: 'latency (ms, log scale)' },
      y: { field: 'share', type: 'quantitative', title: 'share of requests at or below' },
      color: { field: 'config', type: 'nominal' },
    },
  } as TopLevelSpec;
}

/** Bin width for the over-time charts: about 30 bins over the run, at least 1 s. */
export const binS = (e: Experiment): number => Math.max(1, Math.round(e.load.duration_s / 30));

/** Success ratio and p99 per time bin per config (every repetition pooled). */
export function overTime(runs: readonly RunResult[], configs: readonly string[], e: Experiment): { config: string; t: number; success: number; p99: number | null }[] {
  const w = binS(e);
  const bins = Math.ceil(e.load.duration_s / w);
  return configs.flatMap((config) => {
    const rs = runs.filter((r) => r.config === config).flatMap((r) => r.requests);
    return Array.from({ length: bins }, (_, b) => {
      const inBin = rs.filter((r) => r.t >= b * w && r.t < (b + 1) * w);
      const ok = inBin.filter((r) => r.ok).map((r) => r.ms);
      return { config, t: b * w, success: inBin.length ? ok.length / inBin.length : 1, p99: ok.length ? quantile(ok, 0.99) : null };
    }).filter((x, b) => rs.some((r) => r.t >= b * w && r.t < (b + 1) * w) || x.p99 !== null);
  });
}

const faultRows = (e: Experiment): { label: string; start: number; end: number }[] =>
  Object.entries(e.providers).flatMap(([p, s]) =>
    s.faults.filter((f) => f.start_s < e.load.duration_s).map((f) => ({ label: `${p}: ${f.kind}`, start: f.start_s, end: Math.min(f.end_s, e.load.duration_s) })),
  );

/** One over-time panel with the fault windows shaded behind it. */
function panel(values: unknown[], field: string, title: string, e: Experiment, yScale: Record<string, unknown> = {}): Record<string, unknown> {
  const faults = faultRows(e);
  return {
    width: WIDTH,
    height: 180,
    title,
    layer: [
      ...(faults.length
        ? [{ data: { values: faults }, mark: { type: 'rect', opacity: 0.15, color: '#d62728', clip: true }, encoding: { x: { field: 'start', type: 'quantitative' }, x2: { field: 'end' }, tooltip: { field: 'label' } } }]
        : []),
      {
        data: { values },
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 't', type: 'quantitative', title: `time into the run (s, ${binS(e)} s bins; shaded: fault windows)`, scale: { domain: [0, e.load.duration_s] } },
          y: { field, type: 'quantitative', title, scale: yScale },
          color: { field: 'config', type: 'nominal' },
        },
      },
    ],
  };
}

export function overTimeSpec(runs: readonly RunResult[], configs: readonly string[], e: Experiment): TopLevelSpec {
  const values = overTime(runs, configs, e);
  return { ...base, vconcat: [panel(values, 'success', 'success ratio', e, { domain: [0, 1] }), panel(values.filter((v) => v.p99 !== null), 'p99', 'p99 of successes (ms)', e)] } as unknown as TopLevelSpec;
}

/** Share of answered requests per target over time, one row per config. */
export function targetsSpec(runs: readonly RunResult[], configs: readonly string[], e: Experiment): TopLevelSpec {
  const w = binS(e);
  const values = configs.flatMap((config) =>
    runs.filter((r) => r.config === config).flatMap((r) => r.requests.filter((q) => q.target !== null).map((q) => ({ config, t: Math.floor(q.t / w) * w, target: q.cache === 'HIT' || q.cache === 'SEMANTIC_HIT' ? `cache (${q.cache})` : q.target }))),
  );
  return {
    ...base,
    title: 'Share of answered requests per target',
    data: { values },
    facet: { row: { field: 'config', type: 'nominal', title: null } },
    spec: {
      width: WIDTH,
      height: 110,
      mark: 'area',
      encoding: {
        x: { field: 't', type: 'quantitative', title: `time into the run (s, ${w} s bins)` },
        y: { aggregate: 'count', type: 'quantitative', stack: 'normalize', title: 'share' },
        color: { field: 'target', type: 'nominal' },
      },
    },
  } as TopLevelSpec;
}

/** A bar per config: its mean of a per-request figure, with each repetition's value as a dot. */
export function barSpec(perRep: Record<string, number[]>, title: string): TopLevelSpec {
  const values = Object.entries(perRep).flatMap(([config, xs]) => xs.map((v, i) => ({ config, rep: i + 1, v })));
  return {
    ...base,
    title,
    width: WIDTH,
    height: 40 * Object.keys(perRep).length,
    data: { values },
    layer: [
      { mark: 'bar', encoding: { y: { field: 'config', type: 'nominal' }, x: { aggregate: 'mean', field: 'v', type: 'quantitative', title: `${title} (bar: mean; dots: repetitions)` } } },
      { mark: { type: 'point', color: 'black' }, encoding: { y: { field: 'config', type: 'nominal' }, x: { field: 'v', type: 'quantitative' } } },
    ],
  } as TopLevelSpec;
}
