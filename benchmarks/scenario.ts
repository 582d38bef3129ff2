/**
 * What a scenario is (its context and its output), and the measurement helpers several scenarios
 * share: one throughput rep, one fixed-rate run, the per-rep rotation of contenders, formatting.
 * The scenarios themselves are benchmarks/scenarios/<id>.ts; benchmarks/run.ts runs them.
 */
import path from 'node:path';
import {
  ManagedProcess,
  REPO_ROOT,
  findWrk,
  fmt,
  readRssMb,
  runAutocannon,
  runWrk,
  withCpuAndCores,
  type CoreMeasurement,
  type HttpTarget,
  type ThroughputResult,
  type WrkResult,
} from './lib.js';
import { CFG, FIXED_RATE_LUA } from './config.js';

/** A line of the printed table. Numbers are already in `unit`. */
export interface Row {
  metric: string;
  unit: string;
  gateway?: number | string;
  direct?: number | string;
  /** Gateway vs direct: a ratio or a difference, already formatted. */
  compare?: string;
  /** The minimal undici proxy (reference contender), when the scenario measured it. */
  proxy?: number | string;
  /** Minimal proxy vs direct, already formatted. */
  proxyCompare?: string;
  digits?: number;
}
/** A reference figure (not a target): what the minimal proxy reaches, printed after the targets. */
export interface Reference {
  figure: string;
  value: string;
}
export interface Check {
  target: string;
  value: string;
  met: boolean;
}
/** A free-form table printed after the rows (for scenarios with more than gateway vs direct). */
export interface ExtraTable {
  title?: string;
  header: string[];
  rows: (string | number)[][];
}
export interface ScenarioOutput {
  /** Gateway-vs-direct rows; may be empty when the scenario prints `tables` instead. */
  rows: Row[];
  tables?: ExtraTable[];
  checks?: Check[];
  /** Figures of the minimal proxy next to the targets (informative, no yes/NO). */
  reference?: Reference[];
  notes?: string[];
  data: unknown;
}
export interface BenchContext {
  cfg: typeof CFG;
  upstream: ManagedProcess;
  gateway: ManagedProcess;
  /** POST /v1/chat/completions through the gateway to the fake upstream (custom host path selectable). */
  gatewayTarget(opts?: { upstreamPrefix?: string; body?: string; gateway?: ManagedProcess; name?: string }): HttpTarget;
  /** The same POST straight to the fake upstream. */
  directTarget(opts?: { upstreamPrefix?: string; body?: string; name?: string }): HttpTarget;
  /**
   * A config target object reaching the fake upstream through custom_host (the path prefix selects a
   * failure mode: '/fail/503', '/slow/200', '/flaky/50', or '' for the healthy path).
   */
  upstreamConfig(prefix?: string): Record<string, unknown>;
  /** POST through the gateway with the route given as an inline x-gateway-config header only. */
  configTarget(config: Record<string, unknown>, opts?: { body?: string; gateway?: ManagedProcess; name?: string }): HttpTarget;
  /** Starts another gateway (pinned to the gateway core) with extra env and node options; stopped at exit. */
  startGateway(env?: Record<string, string>, name?: string, nodeArgs?: string[]): Promise<ManagedProcess>;
  /**
   * Keeps the load core (upstream, load generators) from idling until the returned process is
   * stopped: a SCHED_IDLE busy loop pinned to it. Undefined when `chrt` is not installed.
   */
  holdLoadCore(): Promise<ManagedProcess | undefined>;
  /**
   * Starts the reference contender, benchmarks/minimal-proxy.ts (node:http + one undici Pool to the
   * fake upstream), pinned to the gateway core. Stop it when the scenario's runs are done.
   */
  startMinimalProxy(): Promise<ManagedProcess>;
  /** The same POST (same headers as gatewayTarget; the proxy ignores x-gateway-*) through the minimal proxy. */
  proxyTarget(proxy: ManagedProcess, opts?: { body?: string; name?: string }): HttpTarget;
  /**
   * Pids of this benchmark's other live processes (the main gateway unless it is `measured`, a
   * running minimal proxy, the load-core holder), so that noise accounting does not count them as
   * foreign CPU.
   */
  otherPids(measured?: ManagedProcess): Record<string, number>;
  /** Results of scenarios that already ran, by id. */
  results: Record<string, ScenarioOutput>;
  commands: Record<string, string>;
  log(msg: string): void;
  /**
   * Before a measured run: waits (up to BENCH_QUIET_WAIT_S, default 0 = don't wait) for other
   * processes on the machine to go quiet.
   */
  quietGate(label: string): Promise<void>;
  /**
   * Records how much CPU other processes on the machine took during a measurement (in cores);
   * warns when it is large. Returns that figure.
   */
  recordNoise(label: string, m: CoreMeasurement): number;
}
export interface Scenario {
  id: string;
  title: string;
  skipInQuick?: boolean;
  run(ctx: BenchContext): Promise<ScenarioOutput>;
}

export const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
export const signed = (x: number, digits = 3): string => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(digits)}` : '-');

export interface ThroughputRep {
  rep: number;
  target: string;
  result: ThroughputResult;
  /** CPU and RSS of the measured server process: the gateway, or the minimal proxy in its reps. */
  gatewayCpuS: number;
  upstreamCpuS: number;
  gatewayCpuUsPerReq: number;
  upstreamCpuUsPerReq: number;
  gatewayRssMb: number;
}

export async function throughputRep(
  ctx: BenchContext,
  t: HttpTarget,
  rep: number,
  gateway: ManagedProcess,
  durationS = ctx.cfg.throughput.durationS,
): Promise<ThroughputRep> {
  const { connections } = ctx.cfg.throughput;
  await ctx.quietGate(`throughput ${t.name} rep ${rep}`);
  const m = await withCpuAndCores({ ...ctx.otherPids(gateway), gw: gateway.pid, up: ctx.upstream.pid }, () => runAutocannon(t, { connections, durationS }));
  const { result, cpu } = m;
  ctx.recordNoise(`throughput ${t.name} rep ${rep}`, m);
  if (result.non2xx || result.errors) ctx.log(`  ! ${t.name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  const r: ThroughputRep = {
    rep,
    target: t.name,
    result,
    gatewayCpuS: cpu.gw!,
    upstreamCpuS: cpu.up!,
    gatewayCpuUsPerReq: (cpu.gw! / result.requests) * 1e6,
    upstreamCpuUsPerReq: (cpu.up! / result.requests) * 1e6,
    gatewayRssMb: readRssMb(gateway.pid),
  };
  const who = gateway.opts.name === 'minimal-proxy' ? 'proxy' : 'gateway';
  ctx.log(
    `  rep ${rep} ${t.name.padEnd(8)} ${result.rps.toFixed(0).padStart(6)} req/s` +
      `  ${who} cpu ${r.gatewayCpuUsPerReq.toFixed(1)} µs/req  upstream cpu ${r.upstreamCpuUsPerReq.toFixed(1)} µs/req  ${who} rss ${r.gatewayRssMb.toFixed(1)} MB`,
  );
  return r;
}

export interface FixedRateRep {
  rep: number;
  target: string;
  result: WrkResult | ThroughputResult;
  gatewayCpuUsPerReq: number;
}

export async function fixedRateRun(ctx: BenchContext, t: HttpTarget, durationS: number, gateway: ManagedProcess): Promise<{ result: WrkResult | ThroughputResult; gatewayCpuUsPerReq: number }> {
  const fr = ctx.cfg.fixedRate;
  await ctx.quietGate(`fixed-rate ${t.name}`);
  const m = await withCpuAndCores({ ...ctx.otherPids(gateway), gw: gateway.pid, up: ctx.upstream.pid }, (): Promise<WrkResult | ThroughputResult> =>
    findWrk()
      ? runWrk({
          url: t.url,
          script: path.relative(REPO_ROOT, FIXED_RATE_LUA),
          scriptArgs: [...t.wrkArgs, String(fr.maxPauseMs), ...(t.wrkHeaders ?? [])],
          connections: fr.connections,
          threads: fr.threads,
          durationS,
          cpu: ctx.cfg.cpu.load,
        })
      : runAutocannon(t, { connections: fr.connections, durationS, overallRate: 1000 }),
  );
  const { result, cpu } = m;
  ctx.recordNoise(`fixed-rate ${t.name}`, m);
  return { result, gatewayCpuUsPerReq: (cpu.gw! / result.requests) * 1e6 };
}

/**
 * The contenders of one rep, starting at a different one each rep (rep 1: as given), so none always
 * runs first after a warm-up or right after a heavier contender: such a position effect was larger
 * than some of the differences these scenarios measure.
 */
export function rotated<T>(xs: readonly T[], rep: number): T[] {
  return xs.map((_, i) => xs[(i + rep - 1) % xs.length]!);
}

export function latencyOf(r: WrkResult | ThroughputResult): { p50: number; p99: number; p999: number } {
  return r.tool === 'wrk' ? { p50: r.latencyMs.p50, p99: r.latencyMs.p99, p999: r.latencyMs.p999 } : { p50: r.latencyMs.p50, p99: r.latencyMs.p99, p999: NaN };
}
export function errorsOf(r: WrkResult | ThroughputResult): number {
  return r.tool === 'wrk' ? r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout : r.errors + r.non2xx;
}


export const ms3 = (x: number): string => fmt(x, 3);
export const ratioStr = (x: number, digits = 2): string => (Number.isFinite(x) ? `${x.toFixed(digits)}×` : '-');
export const statusSummary = (st: Record<string, number>): string =>
  Object.entries(st)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}:${v}`)
    .join(' ');
