/**
 * An experiment file (benchmarks/experiments/<name>.yaml): fake providers with their latency and
 * faults, the routing configs to compare, and the load. Validated here; a bad file is an
 * ExperimentFileError whose message names the field's path (`providers.slow.latency.median_ms: ...`).
 * docs/experiments.md describes every field.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigSchema } from '../../src/config/schema.js';
import { formatPath } from '../../src/config/issues.js';

const ms = z.number().min(0);
const ratio = z.number().min(0).max(1);
const NAME = /^[a-z][a-z0-9_-]{0,39}$/;
const name = z.string().regex(NAME, 'a lower-case name: letters, digits, - and _, starting with a letter');

/** A rare slow answer added on top of any distribution: with probability `p`, `ms` more. */
const Tail = z.strictObject({ p: ratio, ms });
export const LatencySchema = z.discriminatedUnion('dist', [
  z.strictObject({ dist: z.literal('fixed'), ms, tail: Tail.optional() }),
  z.strictObject({ dist: z.literal('normal'), mean_ms: ms, sd_ms: ms, tail: Tail.optional() }),
  z.strictObject({ dist: z.literal('lognormal'), median_ms: z.number().positive(), sigma: z.number().min(0).max(3), tail: Tail.optional() }),
]);

const Window = { start_s: z.number().min(0), end_s: z.number().positive() };
export const FaultSchema = z
  .discriminatedUnion('kind', [
    /** The provider cannot be reached: the connection is reset (or answered with `status`). */
    z.strictObject({ kind: z.literal('outage'), ...Window, status: z.number().int().min(400).max(599).optional() }),
    /** Every call is a 429 with Retry-After: `retry_after_s` (what a provider's rate limiter sends). */
    z.strictObject({ kind: z.literal('rate_limit'), ...Window, retry_after_s: z.number().int().min(0).max(600).default(1) }),
    /** Slower by `latency_factor`, and failing `error_rate` of calls with a 503. */
    z.strictObject({ kind: z.literal('brownout'), ...Window, latency_factor: z.number().min(1).max(1000).default(5), error_rate: ratio.default(0) }),
  ])
  .refine((f) => f.end_s > f.start_s, { message: 'end_s must be after start_s', path: ['end_s'] });

export const ProviderSchema = z.strictObject({
  latency: LatencySchema.default({ dist: 'fixed', ms: 20 }),
  /** Share of calls answered with `error_status` (default 500). */
  error_rate: ratio.default(0),
  error_status: z.number().int().min(400).max(599).default(500),
  /** Streamed answers: `chunks` chunks, one every `interval_ms` after the first; `cut_rate` of them cut halfway. */
  stream: z.strictObject({ chunks: z.number().int().min(2).max(1000).default(20), interval_ms: ms.default(10), cut_rate: ratio.default(0) }).default({ chunks: 20, interval_ms: 10, cut_rate: 0 }),
  /** The model the answer names (the gateway prices the answer by it), default gpt-4o-mini. */
  model: z.string().min(1).default('gpt-4o-mini'),
  faults: z.array(FaultSchema).max(50).default([]),
});

export const PromptsSchema = z.strictObject({
  /** Zipf's exponent: prompt k of `distinct` is sent with probability ∝ 1 / k^s. */
  zipf_s: z.number().min(0).max(4).default(1.1),
  distinct: z.number().int().min(1).max(100_000).default(200),
  /** Share of requests whose prompt is a re-wording (case and punctuation) of its prompt: a semantic hit, never an exact one. */
  rewordings: ratio.default(0),
});

export const LoadSchema = z.strictObject({
  /** Open model: Poisson arrivals at this mean rate, whatever the answers take. */
  rate_per_s: z.number().positive().max(5000),
  duration_s: z.number().positive().max(3600),
  /** Share of requests sent with stream: true. */
  stream_share: ratio.default(0),
  /** A Zipf mix of prompts (cache experiments); without it every request's prompt is its own. */
  prompts: PromptsSchema.optional(),
  /** A request not answered by then counts as a failure (timeout). */
  timeout_s: z.number().positive().max(600).default(30),
});

export const ExperimentSchema = z
  .strictObject({
    name,
    description: z.string().min(1),
    seed: z.number().int().min(0).default(1),
    repetitions: z.number().int().min(1).max(50).default(3),
    providers: z.record(name, ProviderSchema).refine((p) => Object.keys(p).length > 0, 'at least one provider'),
    /** The gateway configs compared, by name; a target's `fake: <provider>` stands for that fake provider. */
    configs: z.record(name, z.record(z.string(), z.unknown())).refine((c) => Object.keys(c).length >= 2, 'at least two configs to compare'),
    load: LoadSchema,
  })
  .superRefine((e, ctx) => {
    for (const [cname, config] of Object.entries(e.configs)) {
      const r = resolveConfig(config, e.providers, 'http://127.0.0.1:1');
      for (const i of r.issues) ctx.addIssue({ code: 'custom', path: ['configs', cname, ...i.path], message: i.message });
    }
  });

export type Experiment = z.infer<typeof ExperimentSchema>;
export type ProviderSpec = z.infer<typeof ProviderSchema>;
export type Fault = z.infer<typeof FaultSchema>;
export type Latency = z.infer<typeof LatencySchema>;

/** The header every fake-provider call carries (the config forwards it): which client request it serves. */
export const REQUEST_HEADER = 'x-experiment-request';

type Issue = { path: (string | number)[]; message: string };

/**
 * A config with each `fake: <name>` target made a gateway target of that fake provider (at
 * `origin(name)`), then checked by the gateway's own config schema.
 */
export function resolveConfig(config: Record<string, unknown>, providers: Record<string, unknown>, origin: string | ((name: string) => string)): { config: Record<string, unknown>; issues: Issue[] } {
  const issues: Issue[] = [];
  const at = typeof origin === 'string' ? () => origin : origin;
  const walk = (node: unknown, p: (string | number)[]): unknown => {
    if (Array.isArray(node)) return node.map((x, i) => walk(x, [...p, i]));
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) out[k] = k === 'targets' ? walk(v, [...p, k]) : v;
    if ('fake' in out) {
      const fake = out.fake;
      delete out.fake;
      if (typeof fake !== 'string' || !(fake in providers)) issues.push({ path: [...p, 'fake'], message: `no provider named ${JSON.stringify(fake)} (providers: ${Object.keys(providers).join(', ')})` });
      else Object.assign(out, { name: out.name ?? fake, provider: 'openai', custom_host: `${at(fake)}/${fake}/v1`, api_key: 'sk-experiment', forward_headers: [REQUEST_HEADER] });
    }
    return out;
  };
  const resolved = walk(config, []) as Record<string, unknown>;
  if (issues.length === 0) {
    const r = ConfigSchema.safeParse(resolved);
    if (!r.success) issues.push(...r.error.issues.map((i) => ({ path: i.path.map((x) => (typeof x === 'symbol' ? String(x) : x)), message: i.message })));
  }
  return { config: resolved, issues };
}

export class ExperimentFileError extends Error {}

/** The first problem of a parsed file, as `path: message`. */
function describe(error: z.ZodError): string {
  const i = error.issues[0]!;
  const p = i.path.map((x) => (typeof x === 'symbol' ? String(x) : x));
  const keys = i.code === 'unrecognized_keys' ? [...p, i.keys[0]!] : p;
  return `${formatPath(keys) || '(the file)'}: ${i.code === 'unrecognized_keys' ? 'unknown field' : i.message}`;
}

/** An experiment from its YAML text; `file` only names it in errors. */
export function parseExperiment(text: string, file = 'experiment'): Experiment {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new ExperimentFileError(`${file}: not YAML: ${(e as Error).message}`);
  }
  const r = ExperimentSchema.safeParse(raw);
  if (!r.success) throw new ExperimentFileError(`${file}: ${describe(r.error)}`);
  for (const [pname, spec] of Object.entries(r.data.providers)) {
    const late = spec.faults.findIndex((f) => f.start_s >= r.data.load.duration_s);
    if (late >= 0) throw new ExperimentFileError(`${file}: providers.${pname}.faults[${late}].start_s: starts after the load ends (load.duration_s is ${r.data.load.duration_s})`);
  }
  return r.data;
}

export function loadExperiment(file: string): Experiment {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ExperimentFileError(`${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  return parseExperiment(text, path.basename(file));
}
