/**
 * Sluice gateway benchmark: gateway vs direct-to-upstream, on one 2-core machine.
 *
 *   npm run bench                 # full run, ≈ 9 minutes
 *   BENCH_QUICK=1 npm run bench   # ≈ 2.5 minutes, for a smoke check of the numbers
 *
 * Layout (see shared BENCHMARKING.md): the gateway is pinned to core 0; the fake upstream, this
 * orchestrator (autocannon, undici) and wrk are pinned to core 1. Every measurement interleaves the
 * gateway and the direct baseline over BENCH_REPS repetitions and reports medians; in the throughput,
 * fixed-rate and routing-overhead scenarios each rep starts at the next contender (A B C, B C A, ...).
 *
 * Scenarios are entries of SCENARIOS below: each gets a BenchContext (processes, targets, config)
 * and returns table rows, target checks and raw data. Ids: throughput, fixed-rate, streams, log-warn,
 * routing-overhead, routing-experiment, cache, semantic. BENCH_ONLY=id1,id2 runs a subset.
 *
 * Other env: BENCH_REPS (default 3), BENCH_CPU_PROF=<dir> (run the gateway under node --cpu-prof,
 * profile written to <dir> when it stops; figures are then not representative),
 * BENCH_OUT=<file> (default benchmarks/results/latest.json), BENCH_REDIS_URL (default
 * redis://127.0.0.1:6379/15, flushed by the cache scenario), BENCH_NO_REDIS=1 (skip the Redis figures).
 * Traffic goes to 127.0.0.1 only. Every child process is stopped on exit, error or Ctrl-C.
 */
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SemanticLookupFigures } from './semantic-lookup.js';
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
  keepAliveAgent,
  machineInfo,
  median,
  percentile,
  pinSelf,
  readCpuTicks,
  readRssMb,
  readStatusKb,
  redisCommands,
  round,
  runAutocannon,
  runOpenLoop,
  runWrk,
  startProcess,
  stopAll,
  table,
  timeStreams,
  withCpuAndCores,
  waitForQuiet,
  type CoreMeasurement,
  type HttpTarget,
  type OpenLoopResult,
  type ThroughputResult,
  type WrkResult,
} from './lib.js';

// ---------------------------------------------------------------------------------------------
// Configuration

const QUICK = process.env.BENCH_QUICK === '1';
const REPS = Math.max(1, Number(process.env.BENCH_REPS ?? 3));
const CFG = {
  quick: QUICK,
  reps: REPS,
  /** Reps of the routing and cache scenarios: BENCH_REPS, but at most 2 in a quick run. */
  laterReps: process.env.BENCH_REPS || !QUICK ? REPS : Math.min(2, REPS),
  cpu: { gateway: '0', load: '1' },
  apiKey: 'sk-sluice-bench-0123456789abcdef',
  logLevel: 'info',
  sideLogLevel: 'warn',
  throughput: { connections: 64, durationS: QUICK ? 5 : 10, warmupS: QUICK ? 2 : 3 },
  /**
   * fixed-rate: closedWarmupS of closed-loop load (autocannon, throughput.connections) on each
   * contender first, so the gateway is JIT-warm even when this scenario runs alone, then warmupS of
   * the fixed-rate load itself.
   */
  fixedRate: { connections: 32, maxPauseMs: 64, threads: 1, durationS: QUICK ? 3 : 8, warmupS: 2, closedWarmupS: QUICK ? 2 : 3 },
  streams: { chunks: 20, pacedIntervalMs: 5, b2bRequests: QUICK ? 100 : 200, pacedRequests: QUICK ? 30 : 200, warmup: 20 },
  /** routing-overhead: closed-loop throughput and wrk fixed rate per routing config (same gateway). */
  routing: { throughputS: QUICK ? 2 : 3, fixedRateS: QUICK ? 2 : 4, warmupS: QUICK ? 1 : 2, hedgeAfterMs: 50 },
  /** routing-experiment: open-loop fixed rate, one healthy and one bad target. */
  experiment: { rate: 200, durationS: QUICK ? 3 : 10, slowMs: 200, flakyPercent: 50, hedgeAfterMs: 50 },
  /** cache: closed-loop throughput of cache hits vs uncached vs direct, memory store and Redis. */
  cache: {
    throughputS: QUICK ? 2 : 3,
    warmupS: QUICK ? 1 : 2,
    maxAgeS: 600,
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/15',
    redis: process.env.BENCH_NO_REDIS !== '1',
  },
  /** semantic: MemoryVectorIndex lookups (benchmarks/semantic-lookup.ts) in a pinned child process. */
  semantic: { sizes: [1_000, 10_000, 100_000], searches: QUICK ? 1_000 : 2_000, dims: 256 },
  /** Before each measured run, wait up to this long for other processes on the machine to go quiet (0 = don't). */
  quietWaitS: Number(process.env.BENCH_QUIET_WAIT_S ?? 0),
  /** Bound on the whole run; the run aborts (children stopped) past it. */
  hardLimitS: Number(process.env.BENCH_HARD_LIMIT_S ?? (QUICK ? 300 : 900)),
};
const OUT_FILE = process.env.BENCH_OUT ?? path.join(BENCH_DIR, 'results', 'latest.json');
const CHAT_BODY = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}';
const STREAM_BODY = '{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hello"}]}';
const FIXED_RATE_LUA = path.join(BENCH_DIR, 'fixed-rate.lua');

// ---------------------------------------------------------------------------------------------
// Scenario plumbing

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
  /** Starts another gateway (pinned to the gateway core) with extra env; stopped at exit. */
  startGateway(env?: Record<string, string>, name?: string): Promise<ManagedProcess>;
  /**
   * Starts the reference contender, benchmarks/minimal-proxy.ts (node:http + one undici Pool to the
   * fake upstream), pinned to the gateway core. Stop it when the scenario's runs are done.
   */
  startMinimalProxy(): Promise<ManagedProcess>;
  /** The same POST (same headers as gatewayTarget; the proxy ignores x-gateway-*) through the minimal proxy. */
  proxyTarget(proxy: ManagedProcess, opts?: { body?: string; name?: string }): HttpTarget;
  /**
   * Pids of this benchmark's other live server processes (the main gateway unless it is `measured`,
   * a running minimal proxy), so that noise accounting does not count them as foreign CPU.
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

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const signed = (x: number, digits = 3): string => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(digits)}` : '-');

// ---------------------------------------------------------------------------------------------
// Scenarios

interface ThroughputRep {
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

async function throughputRep(
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

const throughput: Scenario = {
  id: 'throughput',
  title: `Max throughput (autocannon, ${CFG.throughput.connections} connections, ${CFG.throughput.durationS} s per rep; gateway, minimal proxy and direct interleaved)`,
  async run(ctx) {
    const gw = ctx.gatewayTarget();
    const direct = ctx.directTarget();
    const rssBoot = readRssMb(ctx.gateway.pid);
    const proxy = await ctx.startMinimalProxy();
    try {
      const px = ctx.proxyTarget(proxy);
      const rssProxyBoot = readRssMb(proxy.pid);
      ctx.log(`  warm-up ${ctx.cfg.throughput.warmupS} s each`);
      for (const t of [gw, px, direct]) await runAutocannon(t, { connections: ctx.cfg.throughput.connections, durationS: ctx.cfg.throughput.warmupS });
      const rssWarm = readRssMb(ctx.gateway.pid);
      const reps: ThroughputRep[] = [];
      for (let rep = 1; rep <= ctx.cfg.reps; rep++) {
        for (const t of rotated([gw, px, direct], rep)) reps.push(await throughputRep(ctx, t, rep, t === px ? proxy : ctx.gateway));
      }
      const of = (name: string): ThroughputRep[] => reps.filter((r) => r.target === name);
      const gRps = median(of('gateway').map((r) => r.result.rps));
      const pRps = median(of('proxy').map((r) => r.result.rps));
      const dRps = median(of('direct').map((r) => r.result.rps));
      const ratio = gRps / dRps;
      const proxyRatio = pRps / dRps;
      const gCpu = median(of('gateway').map((r) => r.gatewayCpuUsPerReq));
      const pCpu = median(of('proxy').map((r) => r.gatewayCpuUsPerReq));
      const upCpuDirect = median(of('direct').map((r) => r.upstreamCpuUsPerReq));
      const upCpuViaGw = median(of('gateway').map((r) => r.upstreamCpuUsPerReq));
      const upCpuViaProxy = median(of('proxy').map((r) => r.upstreamCpuUsPerReq));
      const rssAfter = readRssMb(ctx.gateway.pid);
      const rssPeak = readStatusKb(ctx.gateway.pid, 'VmHWM') / 1024;
      const rssMaxRep = Math.max(...of('gateway').map((r) => r.gatewayRssMb));
      const rssProxyAfter = readRssMb(proxy.pid);
      const upRss = readRssMb(ctx.upstream.pid);
      const perRep = (name: string): number[] => Array.from({ length: ctx.cfg.reps }, (_, i) => of(name)[i]!.result.rps / of('direct')[i]!.result.rps);
      const perRepRatios = perRep('gateway');
      const perRepProxyRatios = perRep('proxy');
      const lat = (name: string): string =>
        `${fmt(median(of(name).map((r) => r.result.latencyMs.p50)), 0)} / ${fmt(median(of(name).map((r) => r.result.latencyMs.p99)), 0)}`;
      ctx.commands['minimal-proxy'] = proxy.commandLine;
      return {
        rows: [
          {
            metric: 'Max throughput (median)',
            unit: 'req/s',
            gateway: gRps,
            proxy: pRps,
            direct: dRps,
            compare: `${pct(ratio)} of direct (${pct(gRps / pRps)} of proxy)`,
            proxyCompare: `${pct(proxyRatio)} of direct`,
            digits: 0,
          },
          { metric: 'Latency at max load p50 / p99 (autocannon, ms)', unit: 'ms', gateway: lat('gateway'), proxy: lat('proxy'), direct: lat('direct') },
          {
            metric: 'CPU per request (gateway proc | proxy proc | upstream proc, direct run)',
            unit: 'µs',
            gateway: gCpu,
            proxy: pCpu,
            direct: upCpuDirect,
            compare: `${(gCpu / upCpuDirect).toFixed(1)}× the upstream, ${(gCpu / pCpu).toFixed(1)}× the proxy`,
            proxyCompare: `${(pCpu / upCpuDirect).toFixed(1)}× the upstream`,
            digits: 1,
          },
          { metric: 'Upstream CPU per request when behind the gateway | the proxy', unit: 'µs', gateway: upCpuViaGw, proxy: upCpuViaProxy, digits: 1 },
          {
            metric: 'RSS after throughput runs (gateway | proxy | upstream)',
            unit: 'MB',
            gateway: rssAfter,
            proxy: rssProxyAfter,
            direct: upRss,
            compare: `boot ${rssBoot.toFixed(0)} MB`,
            proxyCompare: `boot ${rssProxyBoot.toFixed(0)} MB`,
            digits: 1,
          },
          {
            metric: 'Gateway RSS: highest after a gateway rep | peak (VmHWM)',
            unit: 'MB',
            gateway: `${rssMaxRep.toFixed(1)} | ${rssPeak.toFixed(1)}`,
          },
        ],
        checks: [
          { target: 'Gateway max throughput ≥ 25% of direct', value: pct(ratio), met: ratio >= 0.25 },
          {
            target: 'Gateway RSS after the run < 150 MB',
            value: `${rssAfter.toFixed(1)} MB (reps up to ${rssMaxRep.toFixed(0)}, peak ${rssPeak.toFixed(0)})`,
            met: rssAfter < 150,
          },
        ],
        reference: [
          { figure: 'Minimal proxy max throughput, % of direct (gateway target ≥ 25%)', value: `${pct(proxyRatio)} (gateway ${pct(ratio)} = ${pct(gRps / pRps)} of the proxy's req/s)` },
          { figure: 'Minimal proxy CPU per request at saturation', value: `${pCpu.toFixed(1)} µs (gateway ${gCpu.toFixed(1)} µs = ${(gCpu / pCpu).toFixed(1)}×)` },
          { figure: 'Minimal proxy RSS after its throughput reps', value: `${rssProxyAfter.toFixed(1)} MB (boot ${rssProxyBoot.toFixed(0)} MB, under tsx)` },
        ],
        notes: [
          'Max throughput: the load generator and the upstream share core 1, so the direct figure is bounded by that core; the gateway and proxy figures by whichever core saturates first.',
          'minimal proxy = benchmarks/minimal-proxy.ts: node:http + one undici Pool (keep-alive, 512 connections) to the fake upstream; forwards the body with content-type and authorization, returns status + body; ignores x-gateway-*. Pinned to core 0 like the gateway and running only during this scenario (and fixed-rate). Its CPU and RSS are its own process\'s; it runs under tsx (like the fake upstream), whose loader thread adds to its RSS from boot on but costs nothing per request.',
          `per-rep % of direct: gateway ${perRepRatios.map(pct).join(' / ')}; proxy ${perRepProxyRatios.map(pct).join(' / ')}`,
        ],
        data: {
          connections: ctx.cfg.throughput.connections,
          durationS: ctx.cfg.throughput.durationS,
          medians: {
            gatewayRps: gRps,
            proxyRps: pRps,
            directRps: dRps,
            ratio,
            proxyRatio,
            gatewayVsProxyRps: gRps / pRps,
            gatewayCpuUsPerReq: gCpu,
            proxyCpuUsPerReq: pCpu,
            gatewayVsProxyCpu: gCpu / pCpu,
            upstreamCpuUsPerReqDirect: upCpuDirect,
            upstreamCpuUsPerReqViaGateway: upCpuViaGw,
            upstreamCpuUsPerReqViaProxy: upCpuViaProxy,
          },
          perRepRatios,
          perRepProxyRatios,
          rssMb: { boot: rssBoot, afterWarmup: rssWarm, perRep: of('gateway').map((r) => r.gatewayRssMb), after: rssAfter, peakVmHWM: rssPeak, upstream: upRss },
          proxyRssMb: { boot: rssProxyBoot, perRep: of('proxy').map((r) => r.gatewayRssMb), after: rssProxyAfter },
          reps,
        },
      };
    } finally {
      await proxy.stop();
    }
  },
};

interface FixedRateRep {
  rep: number;
  target: string;
  result: WrkResult | ThroughputResult;
  gatewayCpuUsPerReq: number;
}

async function fixedRateRun(ctx: BenchContext, t: HttpTarget, durationS: number, gateway: ManagedProcess): Promise<{ result: WrkResult | ThroughputResult; gatewayCpuUsPerReq: number }> {
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
function rotated<T>(xs: readonly T[], rep: number): T[] {
  return xs.map((_, i) => xs[(i + rep - 1) % xs.length]!);
}

function latencyOf(r: WrkResult | ThroughputResult): { p50: number; p99: number; p999: number } {
  return r.tool === 'wrk' ? { p50: r.latencyMs.p50, p99: r.latencyMs.p99, p999: r.latencyMs.p999 } : { p50: r.latencyMs.p50, p99: r.latencyMs.p99, p999: NaN };
}
function errorsOf(r: WrkResult | ThroughputResult): number {
  return r.tool === 'wrk' ? r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout : r.errors + r.non2xx;
}

const fixedRate: Scenario = {
  id: 'fixed-rate',
  title: `Added latency at ≈1,000 req/s (${findWrk() ? 'wrk' : 'autocannon overallRate FALLBACK'}, ${CFG.fixedRate.connections} connections, uniform 0–${CFG.fixedRate.maxPauseMs} ms think time, ${CFG.fixedRate.durationS} s per rep; gateway, minimal proxy and direct interleaved)`,
  async run(ctx) {
    const notes: string[] = [];
    if (!findWrk()) {
      notes.push(`${WRK_INSTALL_HINT}. FELL BACK to autocannon overallRate=1000: its latencies are whole milliseconds and each second's quota goes out in a burst, so sub-millisecond added latency is NOT measured — install wrk for real figures.`);
      ctx.log(`  ! ${notes[0]}`);
    }
    const FR = ctx.cfg.fixedRate;
    const gw = ctx.gatewayTarget();
    const direct = ctx.directTarget();
    const proxy = await ctx.startMinimalProxy();
    try {
      const px = ctx.proxyTarget(proxy);
      const procOf = (t: HttpTarget): ManagedProcess => (t === px ? proxy : ctx.gateway);
      const targets = [gw, px, direct];
      // Warm-up: a few seconds of closed-loop load first (JIT, pools), so the gateway is warm even when
      // this scenario runs alone (BENCH_ONLY=fixed-rate), then the fixed-rate load itself.
      ctx.log(`  warm-up ${FR.closedWarmupS} s closed loop (autocannon, ${ctx.cfg.throughput.connections} connections) + ${FR.warmupS} s at the fixed rate, each`);
      for (const t of targets) await runAutocannon(t, { connections: ctx.cfg.throughput.connections, durationS: FR.closedWarmupS });
      for (const t of targets) await fixedRateRun(ctx, t, FR.warmupS, procOf(t));
      const reps: FixedRateRep[] = [];
      for (let rep = 1; rep <= ctx.cfg.reps; rep++) {
        for (const t of rotated(targets, rep)) {
          const { result, gatewayCpuUsPerReq } = await fixedRateRun(ctx, t, FR.durationS, procOf(t));
          if (result.tool === 'wrk') ctx.commands[`fixed-rate ${t.name}`] = result.command;
          const l = latencyOf(result);
          const errs = errorsOf(result);
          ctx.log(
            `  rep ${rep} ${t.name.padEnd(8)} ${result.rps.toFixed(0).padStart(5)} req/s  p50 ${l.p50.toFixed(3)} ms  p99 ${l.p99.toFixed(3)} ms` +
              (t.name !== 'direct' ? `  ${t.name} cpu ${gatewayCpuUsPerReq.toFixed(1)} µs/req` : '') +
              (errs ? `  ! ${errs} errors` : ''),
          );
          reps.push({ rep, target: t.name, result, gatewayCpuUsPerReq });
        }
      }
      const of = (name: string): FixedRateRep[] => reps.filter((r) => r.target === name);
      const med = (name: string, k: 'p50' | 'p99' | 'p999'): number => median(of(name).map((r) => latencyOf(r.result)[k]));
      const lat = (name: string): { p50: number; p99: number; p999: number } => ({ p50: med(name, 'p50'), p99: med(name, 'p99'), p999: med(name, 'p999') });
      const g = lat('gateway');
      const p = lat('proxy');
      const d = lat('direct');
      const diff = (a: typeof g, b: typeof g): typeof g => ({ p50: a.p50 - b.p50, p99: a.p99 - b.p99, p999: a.p999 - b.p999 });
      const added = diff(g, d);
      const addedProxy = diff(p, d);
      const gatewayVsProxy = diff(g, p);
      const perRepAddedOf = (name: string): { p50: number; p99: number }[] =>
        Array.from({ length: ctx.cfg.reps }, (_, i) => {
          const a = latencyOf(of(name)[i]!.result);
          const b = latencyOf(of('direct')[i]!.result);
          return { p50: a.p50 - b.p50, p99: a.p99 - b.p99 };
        });
      const perRepAdded = perRepAddedOf('gateway');
      const perRepAddedProxy = perRepAddedOf('proxy');
      const gCpu = median(of('gateway').map((r) => r.gatewayCpuUsPerReq));
      const pCpu = median(of('proxy').map((r) => r.gatewayCpuUsPerReq));
      const rps = (name: string): number => median(of(name).map((r) => r.result.rps));
      const row = (label: string, k: 'p50' | 'p99' | 'p999'): Row => ({
        metric: `Latency ${label}`,
        unit: 'ms',
        gateway: g[k],
        proxy: p[k],
        direct: d[k],
        compare: `${signed(added[k])} ms added (${signed(gatewayVsProxy[k])} vs proxy)`,
        proxyCompare: `${signed(addedProxy[k])} ms added`,
        digits: 3,
      });
      const fmtRep = (xs: { p50: number; p99: number }[]): string => xs.map((x) => `${signed(x.p50)}/${signed(x.p99)}`).join(', ');
      notes.push(
        'added = median p50 (p99, p99.9) of the contender − the same median of direct; "vs proxy" = gateway − minimal proxy, what the gateway costs beyond the floor of a Node proxy.',
        `per-rep added p50/p99 (ms): gateway ${fmtRep(perRepAdded)}; proxy ${fmtRep(perRepAddedProxy)}`,
      );
      return {
        rows: [
          { metric: 'Achieved rate (median)', unit: 'req/s', gateway: rps('gateway'), proxy: rps('proxy'), direct: rps('direct'), digits: 0 },
          row('p50', 'p50'),
          row('p99', 'p99'),
          row('p99.9', 'p999'),
          { metric: 'CPU per request at this rate (gateway | proxy)', unit: 'µs', gateway: gCpu, proxy: pCpu, compare: `${(gCpu / pCpu).toFixed(1)}× the proxy`, digits: 1 },
        ],
        checks: [
          { target: 'Added p50 ≤ 0.5 ms at 1,000 req/s', value: `${signed(added.p50)} ms`, met: added.p50 <= 0.5 },
          { target: 'Added p99 ≤ 2 ms at 1,000 req/s', value: `${signed(added.p99)} ms`, met: added.p99 <= 2 },
        ],
        reference: [
          { figure: 'Minimal proxy added p50 at 1,000 req/s (gateway target ≤ 0.5 ms)', value: `${signed(addedProxy.p50)} ms (gateway ${signed(gatewayVsProxy.p50)} ms more)` },
          { figure: 'Minimal proxy added p99 at 1,000 req/s (gateway target ≤ 2 ms)', value: `${signed(addedProxy.p99)} ms (gateway ${signed(gatewayVsProxy.p99)} ms more)` },
          { figure: 'Minimal proxy CPU per request at 1,000 req/s', value: `${pCpu.toFixed(1)} µs (gateway ${gCpu.toFixed(1)} µs)` },
        ],
        notes,
        data: {
          tool: findWrk() ? 'wrk' : 'autocannon-fallback',
          warmup: { closedLoopS: FR.closedWarmupS, fixedRateS: FR.warmupS },
          medians: { gateway: g, proxy: p, direct: d, added, addedProxy, gatewayVsProxy, gatewayCpuUsPerReq: gCpu, proxyCpuUsPerReq: pCpu },
          perRepAdded,
          perRepAddedProxy,
          reps: reps.map((r) => ({ ...r, result: { ...r.result, raw: undefined } })),
        },
      };
    } finally {
      await proxy.stop();
    }
  },
};

interface StreamStats {
  ttfbP50: number;
  ttfbP99: number;
  totalP50: number;
  totalP99: number;
  n: number;
}
function streamStats(xs: { ttfbMs: number; totalMs: number }[]): StreamStats {
  return {
    ttfbP50: percentile(xs.map((x) => x.ttfbMs), 50),
    ttfbP99: percentile(xs.map((x) => x.ttfbMs), 99),
    totalP50: percentile(xs.map((x) => x.totalMs), 50),
    totalP99: percentile(xs.map((x) => x.totalMs), 99),
    n: xs.length,
  };
}

const streams: Scenario = {
  id: 'streams',
  title: `Streams: ${CFG.streams.chunks}-chunk SSE, sequential on one keep-alive connection (undici), back to back and paced ${CFG.streams.pacedIntervalMs} ms`,
  async run(ctx) {
    const s = ctx.cfg.streams;
    const modes = [
      { id: 'back-to-back', prefix: `/s/${s.chunks}/0`, total: s.b2bRequests },
      { id: `paced ${s.pacedIntervalMs} ms`, prefix: `/s/${s.chunks}/${s.pacedIntervalMs}`, total: s.pacedRequests },
    ];
    const agent = keepAliveAgent();
    const rows: Row[] = [];
    const data: Record<string, unknown> = {};
    try {
      for (const mode of modes) {
        const targets = [
          ctx.gatewayTarget({ upstreamPrefix: mode.prefix, body: STREAM_BODY }),
          ctx.directTarget({ upstreamPrefix: mode.prefix, body: STREAM_BODY }),
        ];
        for (const t of targets) await timeStreams(t, s.warmup, agent);
        const per = Math.ceil(mode.total / ctx.cfg.reps);
        const samples: Record<string, { ttfbMs: number; totalMs: number; bytes: number }[]> = { gateway: [], direct: [] };
        const gwCpu: number[] = [];
        for (let rep = 1; rep <= ctx.cfg.reps; rep++) {
          for (const t of targets) {
            await ctx.quietGate(`streams ${mode.id} ${t.name} rep ${rep}`);
            const m = await withCpuAndCores({ gw: ctx.gateway.pid, up: ctx.upstream.pid }, () => timeStreams(t, per, agent));
            const { result, cpu } = m;
            ctx.recordNoise(`streams ${mode.id} ${t.name} rep ${rep}`, m);
            samples[t.name]!.push(...result);
            if (t.name === 'gateway') gwCpu.push((cpu.gw! / per) * 1e6);
          }
        }
        const g = streamStats(samples.gateway!);
        const d = streamStats(samples.direct!);
        ctx.log(
          `  ${mode.id.padEnd(13)} ttfb p50 ${g.ttfbP50.toFixed(3)} vs ${d.ttfbP50.toFixed(3)} ms, p99 ${g.ttfbP99.toFixed(3)} vs ${d.ttfbP99.toFixed(3)} ms; total p50 ${g.totalP50.toFixed(3)} vs ${d.totalP50.toFixed(3)} ms (n=${g.n})`,
        );
        rows.push(
          { metric: `[${mode.id}] TTFB p50`, unit: 'ms', gateway: g.ttfbP50, direct: d.ttfbP50, compare: `${signed(g.ttfbP50 - d.ttfbP50)} ms added`, digits: 3 },
          { metric: `[${mode.id}] TTFB p99`, unit: 'ms', gateway: g.ttfbP99, direct: d.ttfbP99, compare: `${signed(g.ttfbP99 - d.ttfbP99)} ms added`, digits: 3 },
          { metric: `[${mode.id}] total time p50`, unit: 'ms', gateway: g.totalP50, direct: d.totalP50, compare: `${signed(g.totalP50 - d.totalP50)} ms added`, digits: 3 },
          { metric: `[${mode.id}] total time p99`, unit: 'ms', gateway: g.totalP99, direct: d.totalP99, compare: `${signed(g.totalP99 - d.totalP99)} ms added`, digits: 3 },
          { metric: `[${mode.id}] gateway CPU per stream`, unit: 'µs', gateway: median(gwCpu), digits: 0 },
        );
        data[mode.id] = {
          requestsPerTarget: g.n,
          gateway: g,
          direct: d,
          added: { ttfbP50: g.ttfbP50 - d.ttfbP50, ttfbP99: g.ttfbP99 - d.ttfbP99, totalP50: g.totalP50 - d.totalP50, totalP99: g.totalP99 - d.totalP99 },
          gatewayCpuUsPerStream: gwCpu,
          bytesPerStream: { gateway: samples.gateway![0]?.bytes, direct: samples.direct![0]?.bytes },
        };
      }
    } finally {
      await agent.close();
    }
    const notes: string[] = [];
    for (const [mode, d] of Object.entries(data) as [string, { bytesPerStream: { gateway?: number; direct?: number } }][]) {
      const b = d.bytesPerStream;
      if (b.gateway !== b.direct) notes.push(`[${mode}] the client received ${b.gateway} bytes per stream through the gateway, ${b.direct} direct.`);
    }
    return { rows, notes, data };
  },
};

const logWarn: Scenario = {
  id: 'log-warn',
  title: `Side figure: a second gateway with LOG_LEVEL=${CFG.sideLogLevel} (one rep, throughput interleaved with the LOG_LEVEL=${CFG.logLevel} gateway)`,
  skipInQuick: true,
  async run(ctx) {
    const gwProc = await ctx.startGateway({ LOG_LEVEL: ctx.cfg.sideLogLevel }, `gateway (LOG_LEVEL=${ctx.cfg.sideLogLevel})`);
    try {
      const t = ctx.gatewayTarget({ gateway: gwProc, name: `gateway-${ctx.cfg.sideLogLevel}` });
      const tInfo = ctx.gatewayTarget({ name: `gateway-${ctx.cfg.logLevel}` });
      for (const w of [t, tInfo]) await runAutocannon(w, { connections: ctx.cfg.throughput.connections, durationS: ctx.cfg.throughput.warmupS });
      const tpInfo = await throughputRep(ctx, tInfo, 1, ctx.gateway);
      const tp = await throughputRep(ctx, t, 1, gwProc);
      const fr = await fixedRateRun(ctx, t, ctx.cfg.fixedRate.durationS, gwProc);
      const l = latencyOf(fr.result);
      ctx.log(`  fixed rate: ${fr.result.rps.toFixed(0)} req/s  p50 ${l.p50.toFixed(3)} ms  p99 ${l.p99.toFixed(3)} ms  gateway cpu ${fr.gatewayCpuUsPerReq.toFixed(1)} µs/req`);
      const thr = ctx.results.throughput?.data as { medians: { directRps: number } } | undefined;
      const fx = ctx.results['fixed-rate']?.data as { medians: { direct: { p50: number; p99: number } } } | undefined;
      const rows: Row[] = [
        {
          metric: `Max throughput, LOG_LEVEL=${ctx.cfg.sideLogLevel}`,
          unit: 'req/s',
          gateway: tp.result.rps,
          direct: thr?.medians.directRps,
          compare: thr
            ? `${pct(tp.result.rps / thr.medians.directRps)} of direct (${ctx.cfg.logLevel}, same window: ${pct(tpInfo.result.rps / thr.medians.directRps)})`
            : `${ctx.cfg.logLevel}, same window: ${tpInfo.result.rps.toFixed(0)} req/s`,
          digits: 0,
        },
        {
          metric: `Gateway CPU per request, LOG_LEVEL=${ctx.cfg.sideLogLevel}`,
          unit: 'µs',
          gateway: tp.gatewayCpuUsPerReq,
          compare: `${ctx.cfg.logLevel}, same window: ${tpInfo.gatewayCpuUsPerReq.toFixed(1)} µs (${tpInfo.result.rps.toFixed(0)} req/s)`,
          digits: 1,
        },
        { metric: `Latency p50 at 1k req/s, LOG_LEVEL=${ctx.cfg.sideLogLevel}`, unit: 'ms', gateway: l.p50, direct: fx?.medians.direct.p50, compare: fx ? `${signed(l.p50 - fx.medians.direct.p50)} ms added` : undefined, digits: 3 },
        { metric: `Latency p99 at 1k req/s, LOG_LEVEL=${ctx.cfg.sideLogLevel}`, unit: 'ms', gateway: l.p99, direct: fx?.medians.direct.p99, compare: fx ? `${signed(l.p99 - fx.medians.direct.p99)} ms added` : undefined, digits: 3 },
      ];
      return { rows, data: { throughput: tp, throughputInfoSameWindow: tpInfo, fixedRate: { ...fr, result: { ...fr.result, raw: undefined } } } };
    } finally {
      await gwProc.stop();
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Routing, caching and semantic lookup

const ms3 = (x: number): string => fmt(x, 3);
const ratioStr = (x: number, digits = 2): string => (Number.isFinite(x) ? `${x.toFixed(digits)}×` : '-');
const statusSummary = (st: Record<string, number>): string =>
  Object.entries(st)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}:${v}`)
    .join(' ');

interface RoutingConfig {
  id: string;
  label: string;
  config: Record<string, unknown>;
}

const routingOverhead: Scenario = {
  id: 'routing-overhead',
  title: `Routing overhead: routing configs (x-gateway-config) vs a single target on the same gateway — throughput (autocannon, ${CFG.throughput.connections} connections, ${CFG.routing.throughputS} s per rep) and latency at ≈1,000 req/s (wrk, ${CFG.routing.fixedRateS} s per rep), ${CFG.laterReps} interleaved reps`,
  async run(ctx) {
    const R = ctx.cfg.routing;
    const reps = ctx.cfg.laterReps;
    const good = ctx.upstreamConfig('');
    const failing = ctx.upstreamConfig('/fail/503');
    const configs: RoutingConfig[] = [
      { id: 'single', label: 'single target (baseline)', config: good },
      {
        id: 'resilient',
        label: 'retry 2 + request_timeout 10 s + cb_config, 1 target',
        config: { retry: { attempts: 2 }, request_timeout: 10_000, cb_config: { failure_threshold: 5, cooldown_interval: 30_000 }, ...good },
      },
      { id: 'fallback3', label: 'fallback, 3 targets, first two answer 503', config: { strategy: { mode: 'fallback' }, targets: [failing, failing, good] } },
      { id: 'race2', label: `race, 2 healthy targets, hedge_after_ms ${R.hedgeAfterMs}`, config: { strategy: { mode: 'race', hedge_after_ms: R.hedgeAfterMs }, targets: [good, good] } },
    ];
    const targets = configs.map((c) => ctx.configTarget(c.config, { name: c.id }));
    const direct = ctx.directTarget();
    for (const t of targets) {
      const r = await fetchOnce(t);
      if (r.status !== 200) throw new Error(`routing-overhead: ${t.name} smoke request failed: ${r.status} ${r.body.slice(0, 300)}`);
    }
    ctx.log(`  warm-up ${R.warmupS} s each`);
    for (const t of targets) await runAutocannon(t, { connections: ctx.cfg.throughput.connections, durationS: R.warmupS });

    const tp: ThroughputRep[] = [];
    for (let rep = 1; rep <= reps; rep++) for (const t of rotated(targets, rep)) tp.push(await throughputRep(ctx, t, rep, ctx.gateway, R.throughputS));
    const fr: FixedRateRep[] = [];
    for (let rep = 1; rep <= reps; rep++) {
      for (const t of rotated([...targets, direct], rep)) {
        const { result, gatewayCpuUsPerReq } = await fixedRateRun(ctx, t, R.fixedRateS, ctx.gateway);
        if (result.tool === 'wrk' && rep === 1) ctx.commands[`routing-overhead fixed-rate ${t.name}`] = result.command;
        const l = latencyOf(result);
        const errs = errorsOf(result);
        ctx.log(
          `  rep ${rep} ${t.name.padEnd(9)} ${result.rps.toFixed(0).padStart(5)} req/s  p50 ${l.p50.toFixed(3)} ms  p99 ${l.p99.toFixed(3)} ms` +
            (t.name !== 'direct' ? `  gateway cpu ${gatewayCpuUsPerReq.toFixed(1)} µs/req` : '') +
            (errs ? `  ! ${errs} errors` : ''),
        );
        fr.push({ rep, target: t.name, result, gatewayCpuUsPerReq });
      }
    }
    const tpOf = (id: string): ThroughputRep[] => tp.filter((r) => r.target === id);
    const frOf = (id: string): FixedRateRep[] => fr.filter((r) => r.target === id);
    const frMed = (id: string) => ({
      rps: median(frOf(id).map((r) => r.result.rps)),
      p50: median(frOf(id).map((r) => latencyOf(r.result).p50)),
      p99: median(frOf(id).map((r) => latencyOf(r.result).p99)),
      cpu: median(frOf(id).map((r) => r.gatewayCpuUsPerReq)),
      errors: frOf(id).reduce((a, r) => a + errorsOf(r.result), 0),
    });
    const d = frMed('direct');
    const per = Object.fromEntries(
      configs.map((c) => {
        const f = frMed(c.id);
        return [
          c.id,
          {
            label: c.label,
            config: c.config,
            throughputRps: median(tpOf(c.id).map((r) => r.result.rps)),
            throughputNon2xx: tpOf(c.id).reduce((a, r) => a + r.result.non2xx + r.result.errors, 0),
            cpuUsPerReq: median(tpOf(c.id).map((r) => r.gatewayCpuUsPerReq)),
            upstreamCpuUsPerReq: median(tpOf(c.id).map((r) => r.upstreamCpuUsPerReq)),
            fixedRate: f,
            /** gateway p50 − direct p50 at ≈1,000 req/s */
            overheadP50: f.p50 - d.p50,
            overheadP99: f.p99 - d.p99,
          },
        ];
      }),
    ) as Record<string, { label: string; config: unknown; throughputRps: number; throughputNon2xx: number; cpuUsPerReq: number; upstreamCpuUsPerReq: number; fixedRate: ReturnType<typeof frMed>; overheadP50: number; overheadP99: number }>;
    const s = per.single!;
    // Per rep: each config's overhead (vs the same rep's direct run) relative to the single target's.
    const perRepOverheadRatio = Object.fromEntries(
      configs.map((c) => [
        c.id,
        Array.from({ length: reps }, (_, i) => {
          const dp = latencyOf(frOf('direct')[i]!.result).p50;
          return (latencyOf(frOf(c.id)[i]!.result).p50 - dp) / (latencyOf(frOf('single')[i]!.result).p50 - dp);
        }),
      ]),
    );
    const rows = configs.map((c) => {
      const x = per[c.id]!;
      return [
        c.id,
        fmt(x.throughputRps, 0),
        c.id === 'single' ? '-' : pct(x.throughputRps / s.throughputRps),
        fmt(x.cpuUsPerReq, 1),
        c.id === 'single' ? '-' : ratioStr(x.cpuUsPerReq / s.cpuUsPerReq),
        fmt(x.fixedRate.rps, 0),
        ms3(x.fixedRate.p50),
        ms3(x.fixedRate.p99),
        c.id === 'single' ? '-' : signed(x.fixedRate.p50 - s.fixedRate.p50),
        signed(x.overheadP50),
        c.id === 'single' ? '-' : (x.overheadP50 / s.overheadP50 - 1 >= 0 ? '+' : '') + pct(x.overheadP50 / s.overheadP50 - 1),
        fmt(x.fixedRate.cpu, 1),
      ];
    });
    rows.push(['direct', '-', '-', '-', '-', fmt(d.rps, 0), ms3(d.p50), ms3(d.p99), '-', '-', '-', '-']);
    const resilientRatio = per.resilient!.overheadP50 / s.overheadP50;
    const notes = [
      ...configs.map((c) => `${c.id}: ${c.label}`),
      'overhead p50 = gateway p50 − direct p50 at ≈1,000 req/s in this run; "vs single" = how much larger than the single target\'s overhead.',
      'CPU µs/req is the gateway process at saturation (autocannon); "@1k" the same at the fixed rate. fallback3 makes 3 upstream calls per request.',
      `per-rep overhead ratio vs single: ${configs
        .filter((c) => c.id !== 'single')
        .map((c) => `${c.id} ${perRepOverheadRatio[c.id]!.map((x) => x.toFixed(2)).join('/')}`)
        .join(', ')}`,
    ];
    for (const c of configs) {
      const x = per[c.id]!;
      if (x.throughputNon2xx || x.fixedRate.errors) notes.push(`! ${c.id}: ${x.throughputNon2xx} non-2xx/errors at saturation, ${x.fixedRate.errors} at the fixed rate`);
    }
    return {
      rows: [],
      tables: [
        {
          header: ['config', 'max req/s', 'vs single', 'CPU µs/req', 'CPU vs single', 'req/s @1k', 'p50 ms', 'p99 ms', 'p50 − single', 'overhead p50', 'vs single', 'CPU µs/req @1k'],
          rows,
        },
      ],
      checks: [
        {
          target: 'Routing (retry + timeout + breaker) adds ≤ 10% to the single-target overhead at p50',
          value: `${ms3(per.resilient!.overheadP50)} vs ${ms3(s.overheadP50)} ms (${signed((resilientRatio - 1) * 100, 1)}%)`,
          met: resilientRatio <= 1.1,
        },
      ],
      notes,
      data: {
        reps,
        throughputS: R.throughputS,
        fixedRateS: R.fixedRateS,
        direct: d,
        configs: per,
        perRepOverheadRatio,
        throughputReps: tp,
        fixedRateReps: fr.map((r) => ({ ...r, result: { ...r.result, raw: undefined } })),
      },
    };
  },
};

const routingExperiment: Scenario = {
  id: 'routing-experiment',
  title: `Routing experiment: one healthy and one bad target (slow ${CFG.experiment.slowMs} ms, or ${CFG.experiment.flakyPercent}% 503), open loop at ${CFG.experiment.rate} req/s, ${CFG.experiment.durationS} s per run`,
  async run(ctx) {
    const E = ctx.cfg.experiment;
    const good = ctx.upstreamConfig('');
    const bads = [
      { id: `slow ${E.slowMs} ms`, prefix: `/slow/${E.slowMs}` },
      { id: `flaky ${E.flakyPercent}%`, prefix: `/flaky/${E.flakyPercent}` },
    ];
    const out: { bad: string; strategy: string; config: unknown; result: OpenLoopResult; gatewayCpuUsPerReq: number; upstreamCpuUsPerReq: number }[] = [];
    ctx.commands['routing-experiment'] = `undici open loop in the orchestrator (benchmarks/lib.ts runOpenLoop): ${E.rate} req/s for ${E.durationS} s per run, up to 512 connections, config in x-gateway-config`;
    for (const bad of bads) {
      const b = ctx.upstreamConfig(bad.prefix);
      const strategies = [
        { id: 'single (bad)', config: b },
        { id: 'fallback', config: { strategy: { mode: 'fallback' }, targets: [b, good] } },
        { id: `race ${E.hedgeAfterMs} ms`, config: { strategy: { mode: 'race', hedge_after_ms: E.hedgeAfterMs }, targets: [b, good] } },
      ];
      for (const st of strategies) {
        const t = ctx.configTarget(st.config, { name: `${bad.id} ${st.id}` });
        await ctx.quietGate(`routing-experiment ${t.name}`);
        const m = await withCpuAndCores({ gw: ctx.gateway.pid, up: ctx.upstream.pid }, () =>
          runOpenLoop(t, { rate: E.rate, durationS: E.durationS, countHeader: 'x-gateway-target' }),
        );
        ctx.recordNoise(`routing-experiment ${t.name}`, m);
        const r = m.result;
        const row = {
          bad: bad.id,
          strategy: st.id,
          config: st.config,
          result: r,
          gatewayCpuUsPerReq: (m.cpu.gw! / r.sent) * 1e6,
          upstreamCpuUsPerReq: (m.cpu.up! / r.sent) * 1e6,
        };
        out.push(row);
        ctx.log(
          `  ${t.name.padEnd(24)} success ${pct(r.successRate).padStart(6)}  p50 ${ms3(r.okLatencyMs.p50)} ms  p99 ${ms3(r.okLatencyMs.p99)} ms (2xx)` +
            `  statuses ${statusSummary(r.statuses)}  answered by ${statusSummary(r.headerCounts)}`,
        );
      }
    }
    const answeredByGood = (r: OpenLoopResult): string => {
      const n = Object.entries(r.headerCounts)
        .filter(([k]) => k.endsWith('targets[1]'))
        .reduce((a, [, v]) => a + v, 0);
      return r.ok ? pct(n / r.ok) : '-';
    };
    return {
      rows: [],
      tables: [
        {
          header: ['bad target', 'strategy', 'sent', 'success', 'p50 ms (2xx)', 'p99 ms (2xx)', 'p50 ms (all)', 'p99 ms (all)', 'answered by healthy', 'gateway CPU µs/req'],
          rows: out.map((o) => [
            o.bad,
            o.strategy,
            o.result.sent,
            pct(o.result.successRate),
            ms3(o.result.okLatencyMs.p50),
            ms3(o.result.okLatencyMs.p99),
            ms3(o.result.latencyMs.p50),
            ms3(o.result.latencyMs.p99),
            o.strategy.startsWith('single') ? '-' : answeredByGood(o.result),
            fmt(o.gatewayCpuUsPerReq, 0),
          ]),
        },
      ],
      notes: [
        'Open loop (undici in the orchestrator): request i is due at i/rate s and its latency counts from then, so a slow answer does not lower the offered rate.',
        'single (bad) = the bad target alone; fallback = bad first, then healthy; race = bad at once, healthy after hedge_after_ms (or at once when the bad one has failed). No retry, no request_timeout.',
        `Max send lag of the load generator: ${fmt(Math.max(...out.map((o) => o.result.maxSendLagMs)), 1)} ms.`,
      ],
      data: { rate: E.rate, durationS: E.durationS, runs: out },
    };
  },
};

interface CacheRep {
  rep: number;
  target: string;
  result: ThroughputResult;
  gatewayCpuUsPerReq: number;
  upstreamCpuUsPerReq: number;
  redisCpuUsPerReq?: number;
}

const cacheScenario: Scenario = {
  id: 'cache',
  title: `Cache hits: simple cache (identical body, all hits after the first) vs the uncached gateway vs direct, memory store and Redis (autocannon, ${CFG.throughput.connections} connections, ${CFG.cache.throughputS} s per rep, ${CFG.laterReps} interleaved reps)`,
  async run(ctx) {
    const C = ctx.cfg.cache;
    const reps = ctx.cfg.laterReps;
    const notes: string[] = [];
    const good = ctx.upstreamConfig('');
    const cached = { cache: { mode: 'simple', max_age: C.maxAgeS }, ...good };

    // Redis: db 15 (by default) is flushed before and after; the gateway's keys carry its sluice: prefix.
    let redisPid: number | undefined;
    let redisGw: ManagedProcess | undefined;
    if (C.redis) {
      try {
        const [, info] = await redisCommands(C.redisUrl, [['FLUSHDB'], ['INFO', 'server']]);
        const pid = Number(/process_id:(\d+)/.exec(info ?? '')?.[1]);
        try {
          if (pid) readCpuTicks(pid);
          redisPid = pid || undefined;
        } catch {
          notes.push(`redis-server (pid ${pid}) is not visible from here: its CPU is not measured and counts as noise.`);
        }
        redisGw = await ctx.startGateway({ REDIS_URL: C.redisUrl }, 'gateway (redis)');
      } catch (e) {
        notes.push(`Redis at ${C.redisUrl} unusable (${e instanceof Error ? e.message : String(e)}): Redis figures skipped.`);
      }
    } else notes.push('BENCH_NO_REDIS=1: Redis figures skipped.');

    try {
      const targets: { t: HttpTarget; gw?: ManagedProcess; kind: string }[] = [
        { t: ctx.directTarget(), kind: 'direct' },
        { t: ctx.configTarget(good, { name: 'mem-uncached' }), gw: ctx.gateway, kind: 'uncached' },
        { t: ctx.configTarget(cached, { name: 'mem-hit' }), gw: ctx.gateway, kind: 'hit' },
      ];
      if (redisGw) {
        targets.push(
          { t: ctx.configTarget(good, { name: 'redis-uncached', gateway: redisGw }), gw: redisGw, kind: 'uncached' },
          { t: ctx.configTarget(cached, { name: 'redis-hit', gateway: redisGw }), gw: redisGw, kind: 'hit' },
        );
      }
      // Prime the cache entries and check that they hit.
      for (const { t, kind } of targets) {
        if (kind !== 'hit') continue;
        await fetchOnce(t);
        const r = await fetchOnce(t);
        if (r.status !== 200 || r.headers['x-gateway-cache-status'] !== 'HIT') {
          throw new Error(`cache: ${t.name} second request is not a hit (status ${r.status}, x-gateway-cache-status ${String(r.headers['x-gateway-cache-status'])})`);
        }
      }
      ctx.log(`  warm-up ${C.warmupS} s each`);
      for (const { t } of targets) await runAutocannon(t, { connections: ctx.cfg.throughput.connections, durationS: C.warmupS });
      const cr: CacheRep[] = [];
      for (let rep = 1; rep <= reps; rep++) {
        for (const { t, gw } of targets) {
          const label = `cache ${t.name} rep ${rep}`;
          await ctx.quietGate(label);
          const pids: Record<string, number> = { gw: (gw ?? ctx.gateway).pid, up: ctx.upstream.pid };
          if (redisPid) pids.redis = redisPid;
          // the idle other gateway is ours too, not noise
          if (redisGw) pids.gw2 = gw === redisGw ? ctx.gateway.pid : redisGw.pid;
          const m = await withCpuAndCores(pids, () => runAutocannon(t, { connections: ctx.cfg.throughput.connections, durationS: C.throughputS }));
          ctx.recordNoise(label, m);
          const n = m.result.requests;
          const r: CacheRep = {
            rep,
            target: t.name,
            result: m.result,
            gatewayCpuUsPerReq: gw ? (m.cpu.gw! / n) * 1e6 : NaN,
            upstreamCpuUsPerReq: (m.cpu.up! / n) * 1e6,
            ...(redisPid ? { redisCpuUsPerReq: (m.cpu.redis! / n) * 1e6 } : {}),
          };
          if (m.result.non2xx || m.result.errors) ctx.log(`  ! ${t.name}: ${m.result.non2xx} non-2xx, ${m.result.errors} errors`);
          ctx.log(
            `  rep ${rep} ${t.name.padEnd(14)} ${m.result.rps.toFixed(0).padStart(6)} req/s` +
              (gw ? `  gateway cpu ${r.gatewayCpuUsPerReq.toFixed(1)} µs/req` : '') +
              `  upstream cpu ${r.upstreamCpuUsPerReq.toFixed(1)} µs/req` +
              (r.redisCpuUsPerReq !== undefined ? `  redis cpu ${r.redisCpuUsPerReq.toFixed(1)} µs/req` : ''),
          );
          cr.push(r);
        }
      }
      // The entries are still hits after the load.
      for (const { t, kind } of targets) {
        if (kind !== 'hit') continue;
        const r = await fetchOnce(t);
        if (r.headers['x-gateway-cache-status'] !== 'HIT') notes.push(`! ${t.name}: after the runs the answer was ${String(r.headers['x-gateway-cache-status'])}, not HIT`);
      }
      const of = (name: string): CacheRep[] => cr.filter((r) => r.target === name);
      const med = (name: string, f: (r: CacheRep) => number | undefined): number => median(of(name).map((r) => f(r) ?? NaN));
      const rps = (name: string): number => med(name, (r) => r.result.rps);
      const perRepRatio = (a: string, b: string): number[] => Array.from({ length: reps }, (_, i) => of(a)[i]!.result.rps / of(b)[i]!.result.rps);
      const dRps = rps('direct');
      const memRatio = rps('mem-hit') / rps('mem-uncached');
      const redisRatio = redisGw ? rps('redis-hit') / rps('redis-uncached') : NaN;
      const redisRatioVsMemUncached = redisGw ? rps('redis-hit') / rps('mem-uncached') : NaN;
      const rows = targets.map(({ t }) => {
        const n = t.name;
        const same = n === 'mem-hit' ? 'mem-uncached' : n === 'redis-hit' ? 'redis-uncached' : undefined;
        return [
          n,
          fmt(rps(n), 0),
          same ? ratioStr(rps(n) / rps(same)) : '-',
          n === 'direct' ? '-' : pct(rps(n) / dRps),
          n === 'direct' ? '-' : fmt(med(n, (r) => r.gatewayCpuUsPerReq), 1),
          redisPid ? fmt(med(n, (r) => r.redisCpuUsPerReq), 1) : '-',
          fmt(med(n, (r) => r.upstreamCpuUsPerReq), 1),
          `${fmt(med(n, (r) => r.result.latencyMs.p50), 0)} / ${fmt(med(n, (r) => r.result.latencyMs.p99), 0)}`,
        ];
      });
      const checks: Check[] = [{ target: 'Memory cache hit ≥ 1.5× the uncached gateway (throughput)', value: ratioStr(memRatio), met: memRatio >= 1.5 }];
      notes.push(`per-rep hit/uncached ratio: memory ${perRepRatio('mem-hit', 'mem-uncached').map((x) => x.toFixed(2)).join('/')}`);
      if (redisGw) {
        checks.push({
          target: 'Redis cache hit ≥ 1.2× the uncached gateway (throughput)',
          value: `${ratioStr(redisRatio)} (${ratioStr(redisRatioVsMemUncached)} vs mem-uncached)`,
          met: redisRatio >= 1.2,
        });
        notes.push(`per-rep hit/uncached ratio: Redis ${perRepRatio('redis-hit', 'redis-uncached').map((x) => x.toFixed(2)).join('/')}`);
      }
      ctx.commands.cache = `autocannon programmatic API: POST with x-gateway-config ${JSON.stringify(cached)} (hits) or without cache (uncached), ${ctx.cfg.throughput.connections} connections, ${C.throughputS} s per rep; Redis db flushed with FLUSHDB before and after`;
      notes.push(
        'vs uncached = throughput over the same gateway process without cache in its config. CPU µs/req: gateway process; redis = redis-server; upstream = the fake upstream (0 on hits).',
        'The Redis gateway runs with REDIS_URL (same as --redis); only one gateway is loaded at a time, both pinned to core 0.',
      );
      return {
        rows: [],
        tables: [{ header: ['path', 'req/s', 'vs uncached', 'of direct', 'gateway CPU µs/req', 'redis CPU µs/req', 'upstream CPU µs/req', 'p50 / p99 ms'], rows }],
        checks,
        notes,
        data: {
          reps,
          throughputS: C.throughputS,
          redisUrl: redisGw ? C.redisUrl : undefined,
          redisPid,
          medians: Object.fromEntries(
            targets.map(({ t }) => [
              t.name,
              { rps: rps(t.name), gatewayCpuUsPerReq: med(t.name, (r) => r.gatewayCpuUsPerReq), redisCpuUsPerReq: med(t.name, (r) => r.redisCpuUsPerReq), upstreamCpuUsPerReq: med(t.name, (r) => r.upstreamCpuUsPerReq) },
            ]),
          ),
          ratios: { memHitVsUncached: memRatio, redisHitVsUncached: redisRatio, redisHitVsMemUncached: redisRatioVsMemUncached },
          perRep: cr,
          gatewayRssMb: { memory: readRssMb(ctx.gateway.pid), redis: redisGw ? readRssMb(redisGw.pid) : undefined },
        },
      };
    } finally {
      if (redisGw) {
        await redisGw.stop();
        await redisCommands(C.redisUrl, [['FLUSHDB']]).catch(() => undefined);
      }
    }
  },
};

const semantic: Scenario = {
  id: 'semantic',
  title: `Semantic cache lookup: MemoryVectorIndex search at ${CFG.semantic.sizes.map((n) => n.toLocaleString('en-US')).join(' / ')} entries (${CFG.semantic.dims} dims, ${CFG.semantic.searches} searches each; measureSemanticLookup() in a child pinned to core ${CFG.cpu.load})`,
  async run(ctx) {
    const S = ctx.cfg.semantic;
    await ctx.quietGate('semantic');
    const m = await withCpuAndCores({}, async () => {
      const p = new ManagedProcess({
        name: 'semantic-lookup',
        cpu: ctx.cfg.cpu.load,
        command: process.execPath,
        args: ['--import', 'tsx', path.relative(REPO_ROOT, path.join(BENCH_DIR, 'semantic-lookup.ts'))],
        env: { SEMANTIC_JSON: '1', SEMANTIC_SIZES: S.sizes.join(','), SEMANTIC_SEARCHES: String(S.searches), SEMANTIC_DIMS: String(S.dims) },
        discardStdout: false,
      });
      ctx.commands.semantic = p.commandLine;
      let out = '';
      p.child.stdout!.setEncoding('utf8');
      p.child.stdout!.on('data', (x: string) => (out += x));
      await p.exited;
      const j = /^SEMANTIC_JSON (.*)$/m.exec(out);
      if (!j) throw new Error(`semantic-lookup printed no SEMANTIC_JSON line:\n${out}\n${p.describeExit()}`);
      return JSON.parse(j[1]!) as SemanticLookupFigures[];
    });
    ctx.recordNoise('semantic', m);
    const figs = m.result;
    const at100k = figs.find((f) => f.entries === 100_000) ?? figs[figs.length - 1]!;
    return {
      rows: [],
      tables: [
        {
          header: ['entries', 'dims', 'searches', 'p50 ms', 'p99 ms', 'mean ms', 'recall', 'insert µs/entry'],
          rows: figs.map((f) => [f.entries.toLocaleString('en-US'), f.dims, f.searches, ms3(f.p50Ms), ms3(f.p99Ms), ms3(f.meanMs), fmt(f.recall, 3), fmt(f.insertUsPerEntry, 1)]),
        },
      ],
      checks: [{ target: `Semantic lookup p99 < 2 ms at ${at100k.entries.toLocaleString('en-US')} entries`, value: `${ms3(at100k.p99Ms)} ms`, met: at100k.p99Ms < 2 }],
      notes: ['One partition, threshold 0.95; half the searches are near-duplicates of a stored vector (cosine 0.95–1, should hit), half unrelated (miss). recall = share of near-duplicates found.'],
      data: { figures: figs },
    };
  },
};

/** Scenarios, in run order. Add new ones here. */
export const SCENARIOS: Scenario[] = [throughput, fixedRate, streams, logWarn, routingOverhead, routingExperiment, cacheScenario, semantic];

// ---------------------------------------------------------------------------------------------
// Orchestration

async function main(): Promise<void> {
  const t0 = Date.now();
  installCleanup(CFG.hardLimitS * 1000);
  const log = (msg: string): void => void process.stdout.write(`${msg}\n`);
  const machine = machineInfo();
  const pinned = pinSelf(CFG.cpu.load);
  if (!pinned) log('! could not pin the orchestrator with taskset; figures will be noisier');
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'main.js'))) throw new Error('dist/main.js missing: run `npx tsc -p tsconfig.build.json` (npm run bench does)');
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
  const startGateway = async (env: Record<string, string> = {}, name = 'gateway'): Promise<ManagedProcess> => {
    const port = await freePort();
    const nodeArgs = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [];
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
  /** Reference contenders (the minimal proxy) while they run; their CPU is not noise. */
  const auxProcs = new Set<ManagedProcess>();
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
    commands['minimal-proxy'] = p.commandLine;
    auxProcs.add(p);
    void p.exited.then(() => auxProcs.delete(p));
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
  out.push(`\nTotal run time ${elapsedS.toFixed(0)} s. Full figures: ${path.relative(REPO_ROOT, OUT_FILE)}`);
  log(out.join('\n'));

  mkdirSync(path.dirname(OUT_FILE), { recursive: true });
  const json = {
    startedAt: new Date(t0).toISOString(),
    elapsedS: round(elapsedS, 1),
    quick: QUICK,
    config: CFG,
    machine,
    layout: { gatewayCore: CFG.cpu.gateway, loadCore: CFG.cpu.load, orchestratorPinned: pinned },
    commands: {
      bench: `${QUICK ? 'BENCH_QUICK=1 ' : ''}npm run bench`,
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
  writeFileSync(OUT_FILE, `${JSON.stringify(json, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? round(v, 4) : v), 2)}\n`);
  process.exit(0);
}

// Run only when executed (not when imported for its types or SCENARIOS).
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch(async (e: unknown) => {
    process.stderr.write(`\nbenchmark failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    await stopAll(1500);
    process.exit(1);
  });
}
