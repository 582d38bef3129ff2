/** Scenario `guardrails`: see benchmarks/README.md. */
import path from 'node:path';
import { BENCH_DIR, REPO_ROOT, fetchOnce, fmt, median, runAutocannon, type HttpTarget, type ManagedProcess } from '../lib.js';
import { CFG } from '../config.js';
import {
  fixedRateRun,
  latencyOf,
  errorsOf,
  ms3,
  pct,
  ratioStr,
  rotated,
  signed,
  throughputRep,
  type FixedRateRep,
  type Scenario,
  type BenchContext,
  type ThroughputRep,
} from '../scenario.js';

/** The issue's limit: gateway CPU per request with the guardrails ÷ without, same run. */
export const GUARDRAILS_CPU_LIMIT = 1.15;

/**
 * An input guardrail (regexMatch + wordCount) and an output guardrail (contains + characterCount),
 * both with deny, whose checks pass on the bench's request ("hello") and the fake upstream's answer
 * ("Hello! How can I help you today?"). The regex is the README's SSN example with `not`: it scans
 * the text and finds nothing, as a real deny-list guardrail does on clean traffic.
 */
export const GUARDRAILS = {
  input_guardrails: [
    {
      'default.regexMatch': { rule: '\\b\\d{3}-\\d{2}-\\d{4}\\b', not: true },
      'default.wordCount': { minWords: 1, maxWords: 1000 },
      deny: true,
    },
  ],
  output_guardrails: [
    {
      'default.contains': { words: ['confidential', 'internal only'], operator: 'none' },
      'default.characterCount': { minCharacters: 1, maxCharacters: 100_000 },
      deny: true,
    },
  ],
};

interface HookResultsBody {
  hook_results?: { before_request_hooks?: { verdict: boolean; checks: unknown[] }[]; after_request_hooks?: { verdict: boolean; checks: unknown[] }[] };
}

/** Both answer 200; only the guarded one carries hook_results, with both hooks run and passed (2 checks each). */
async function smoke(plain: HttpTarget, guarded: HttpTarget): Promise<void> {
  const p = await fetchOnce(plain);
  if (p.status !== 200 || p.body.includes('hook_results')) throw new Error(`guardrails: plain smoke request: ${p.status} ${p.body.slice(0, 300)}`);
  const g = await fetchOnce(guarded);
  const hr = g.status === 200 ? (JSON.parse(g.body) as HookResultsBody).hook_results : undefined;
  const before = hr?.before_request_hooks ?? [];
  const after = hr?.after_request_hooks ?? [];
  if (before.length !== 1 || after.length !== 1 || ![...before, ...after].every((h) => h.verdict && h.checks.length === 2)) {
    throw new Error(`guardrails: guarded smoke request should pass both guardrails (2 checks each): ${g.status} ${g.body.slice(0, 600)}`);
  }
}

/**
 * The calibration's known cost: CPU spent on the answer path, just before the write, by the
 * calibration process's preload (benchmarks/calibration-spin.mjs); about what the guardrails add
 * per request on the held load core.
 */
export const CALIBRATION_SPIN_US = 14;
/** A topology's CPU reading is usable when the known cost reads within this fraction of itself. */
export const CALIBRATION_TOLERANCE = 0.25;

/**
 * Where the measurement runs. `as-is`: the upstream and the load generator on the load core, which
 * idles between their bursts; CPU added to the request path reads as more than itself there (a
 * known 14 µs read 14-27 µs, depending on the day). `held`: the same with that core kept busy by a
 * SCHED_IDLE loop, where it usually reads closer to itself, but the plain config costs more. Each
 * run's own calibration says how far off it was. Why: benchmarks/README.md, "Calibrating the
 * guardrails figure".
 */
type Topology = 'as-is' | 'held';
const TOPOLOGY_LABEL: Record<Topology, string> = {
  'as-is': 'load core as is (idles between bursts)',
  held: 'load core held busy (SCHED_IDLE loop on it)',
};

interface Calibration {
  /** Median over pairs of (CPU µs/req with the known spin) − (without), same process. */
  readUs: number;
  deltas: number[];
  withinTolerance: boolean;
}

interface TopologyResult {
  id: Topology;
  /** Each rep process's median paired ratio guarded ÷ plain. */
  perProcess: number[];
  ratio: number;
  plainUs: number;
  guardedUs: number;
  calibration: Calibration;
}

/**
 * Both targets of `pair` on their (one) gateway process: warmed, then measured in alternating
 * windows, the order rotating per pair. Returns every window and each pair's second ÷ first CPU.
 */
async function pairedWindows(ctx: BenchContext, pair: [HttpTarget, HttpTarget], rep: number): Promise<{ reps: ThroughputRep[]; ratios: number[]; deltas: number[] }> {
  const G = ctx.cfg.guardrails;
  const proc = pair[0].proc;
  for (const t of pair) await runAutocannon(t, { connections: ctx.cfg.throughput.connections, durationS: G.warmupS });
  const reps: ThroughputRep[] = [];
  const ratios: number[] = [];
  const deltas: number[] = [];
  for (let i = 0; i < G.pairs; i++) {
    const cpu = new Map<HttpTarget, number>();
    for (const t of rotated(pair, rep + i)) {
      const r = await throughputRep(ctx, t, rep, proc, G.windowS);
      reps.push(r);
      cpu.set(t, r.gatewayCpuUsPerReq);
    }
    ratios.push(cpu.get(pair[1])! / cpu.get(pair[0])!);
    deltas.push(cpu.get(pair[1])! - cpu.get(pair[0])!);
  }
  return { reps, ratios, deltas };
}

/**
 * What a known CPU cost on the answer path reads as: a gateway process with the calibration preload,
 * the plain config with and without `x-bench-spin-us`, in alternating windows as the reps are.
 */
async function calibrate(ctx: BenchContext, plainConfig: Record<string, unknown>, suffix: string): Promise<Calibration> {
  const proc = await ctx.startGateway({}, 'gateway (guardrails calibration)', ['--import', `./${path.relative(REPO_ROOT, path.join(BENCH_DIR, 'calibration-spin.mjs'))}`]);
  try {
    // Both sides send the header (0: no spin), so both parse the same request.
    const base = ctx.configTarget(plainConfig, { gateway: proc });
    const withSpin = (us: number, name: string): HttpTarget => ({ ...base, name, headers: { ...base.headers, 'x-bench-spin-us': String(us) } });
    const plain = withSpin(0, `calibration plain${suffix}`);
    const spun = withSpin(CALIBRATION_SPIN_US, `calibration + ${CALIBRATION_SPIN_US} µs${suffix}`);
    const { deltas } = await pairedWindows(ctx, [plain, spun], 1);
    const readUs = median(deltas);
    return { readUs, deltas, withinTolerance: Math.abs(readUs - CALIBRATION_SPIN_US) <= CALIBRATION_TOLERANCE * CALIBRATION_SPIN_US };
  } finally {
    await proc.stop(2000);
  }
}

export const guardrails: Scenario = {
  id: 'guardrails',
  title: `Guardrails: one target with vs without an input guardrail (regexMatch + wordCount) and an output guardrail (contains + characterCount), deny on, non-stream JSON — throughput (autocannon, ${CFG.throughput.connections} connections, ${CFG.guardrails.pairs} alternating pairs of ${CFG.guardrails.windowS} s windows per rep, each rep on a new gateway process; once with the load core as is and, where chrt can hold it, once held busy, each followed by a calibration with a known ${CALIBRATION_SPIN_US} µs) and latency at ≈1,000 req/s (wrk, ${CFG.guardrails.fixedRateS} s per rep), ${CFG.reps} interleaved reps`,
  async run(ctx) {
    const G = ctx.cfg.guardrails;
    const reps = ctx.cfg.reps;
    const good = ctx.upstreamConfig('');
    const configs = [
      { id: 'plain', label: 'single target, no guardrails (baseline)', config: good },
      { id: 'guarded', label: 'the same target + input_guardrails [regexMatch, wordCount] + output_guardrails [contains, characterCount], deny: true', config: { ...good, ...GUARDRAILS } },
    ];
    /** The two contenders on `gateway` (the main one by default), their names ending in `suffix`. */
    const pairOn = (gateway?: ManagedProcess, suffix = ''): [HttpTarget, HttpTarget] => [
      ctx.configTarget(configs[0]!.config, { name: `plain${suffix}`, gateway }),
      ctx.configTarget(configs[1]!.config, { name: `guarded${suffix}`, gateway }),
    ];
    const [plain, guarded] = pairOn();
    const direct = ctx.directTarget();
    await smoke(plain, guarded);

    // Saturation, twice: with the machine as it is, and with the load core held busy (see
    // `Topology`). In each, every rep runs on a gateway process of its own, checked and warmed with
    // both configs; the ratio is steady within a process but differs between processes of one build
    // (benchmarks/README.md), so the medians are taken over processes. Within a process the CPU per
    // request still moves by ±25% between windows of the same config (host noise on these machines),
    // so each process is measured in short alternating windows and its ratio is the median of the
    // per-pair ratios: noise slower than a pair cancels out. Each topology ends with its calibration.
    const tp: ThroughputRep[] = [];
    const topologies: TopologyResult[] = [];
    for (const id of ['as-is', 'held'] as const) {
      const holder = id === 'held' ? await ctx.holdLoadCore() : undefined;
      if (id === 'held' && !holder) {
        ctx.log('  ! the load core could not be held (chrt missing or refused): the held measurement is skipped');
        continue;
      }
      // Windows of each topology carry its name (as is: the plain names the tables use).
      const suffix = id === 'as-is' ? '' : ' (held)';
      ctx.log(`  ${TOPOLOGY_LABEL[id]}`);
      try {
        const perProcess: number[] = [];
        const own: ThroughputRep[] = [];
        for (let rep = 1; rep <= reps; rep++) {
          const proc = await ctx.startGateway({}, 'gateway (guardrails rep)');
          try {
            const pair = pairOn(proc, suffix);
            await smoke(...pair);
            ctx.log(`  rep ${rep}: a new gateway process (pid ${proc.pid}), warm-up ${G.warmupS} s each`);
            const r = await pairedWindows(ctx, pair, rep);
            own.push(...r.reps);
            perProcess.push(median(r.ratios));
            ctx.log(`  rep ${rep}: guarded ÷ plain per pair ${r.ratios.map((x) => x.toFixed(2)).join(' ')}; median ${median(r.ratios).toFixed(3)}`);
          } finally {
            await proc.stop(2000);
          }
        }
        const calibration = await calibrate(ctx, configs[0]!.config, suffix);
        ctx.log(`  calibration: a known ${CALIBRATION_SPIN_US} µs on the answer path reads ${calibration.readUs.toFixed(1)} µs (pairs ${calibration.deltas.map((x) => x.toFixed(1)).join(' ')})`);
        if (holder && !holder.alive) {
          ctx.log('  ! the load-core holder died during the measurement: the held figures are dropped');
          continue;
        }
        tp.push(...own);
        const cpuOf = (name: string) => median(own.filter((r) => r.target === name + suffix).map((r) => r.gatewayCpuUsPerReq));
        topologies.push({ id, perProcess, ratio: median(perProcess), plainUs: cpuOf('plain'), guardedUs: cpuOf('guarded'), calibration });
      } finally {
        await holder?.stop(1000);
      }
    }

    // Latency at the fixed rate: on the main gateway, warmed first.
    ctx.log(`  warm-up ${G.warmupS} s each (main gateway)`);
    for (const t of [plain, guarded]) await runAutocannon(t, { connections: ctx.cfg.throughput.connections, durationS: G.warmupS });
    const fr: FixedRateRep[] = [];
    for (let rep = 1; rep <= reps; rep++) {
      for (const t of rotated([plain, guarded, direct], rep)) {
        const { result, gatewayCpuUsPerReq } = await fixedRateRun(ctx, t, G.fixedRateS, ctx.gateway);
        if (result.tool === 'wrk' && rep === 1) ctx.commands[`guardrails fixed-rate ${t.name}`] = result.command;
        const l = latencyOf(result);
        const errs = errorsOf(result);
        ctx.log(
          `  rep ${rep} ${t.name.padEnd(8)} ${result.rps.toFixed(0).padStart(5)} req/s  p50 ${l.p50.toFixed(3)} ms  p99 ${l.p99.toFixed(3)} ms` +
            (t.name !== 'direct' ? `  gateway cpu ${gatewayCpuUsPerReq.toFixed(1)} µs/req` : '') +
            (errs ? `  ! ${errs} errors` : ''),
        );
        fr.push({ rep, target: t.name, result, gatewayCpuUsPerReq });
      }
    }

    const tpOf = (id: string): ThroughputRep[] => tp.filter((r) => r.target === id);
    const frOf = (id: string): FixedRateRep[] => fr.filter((r) => r.target === id);
    const per = (id: string) => ({
      throughputRps: median(tpOf(id).map((r) => r.result.rps)),
      throughputP50Ms: median(tpOf(id).map((r) => r.result.latencyMs.p50)),
      throughputNon2xx: tpOf(id).reduce((a, r) => a + r.result.non2xx + r.result.errors, 0),
      cpuUsPerReq: median(tpOf(id).map((r) => r.gatewayCpuUsPerReq)),
      fixedRate: {
        rps: median(frOf(id).map((r) => r.result.rps)),
        p50: median(frOf(id).map((r) => latencyOf(r.result).p50)),
        p99: median(frOf(id).map((r) => latencyOf(r.result).p99)),
        cpu: median(frOf(id).map((r) => r.gatewayCpuUsPerReq)),
        errors: frOf(id).reduce((a, r) => a + errorsOf(r.result), 0),
      },
    });
    const a = per('plain');
    const b = per('guarded');
    const d = per('direct').fixedRate;
    // The checked figure. As is, a µs on the request path can read as up to two, so it is taken on
    // the held load core when it could be held, and only when that topology's calibration is usable.
    // Holding the core also raises the plain config's cost, which lowers any ratio by itself; so the
    // figure is the larger of the held ratio (median over processes of each one's median paired
    // ratio) and the cross-check: the held difference scaled by its calibration, over the plain
    // config's CPU as is.
    const asIs = topologies.find((t) => t.id === 'as-is')!;
    const checked = topologies.find((t) => t.id === 'held') ?? asIs;
    const crossCheck = checked === asIs ? undefined : 1 + ((checked.guardedUs - checked.plainUs) * CALIBRATION_SPIN_US) / checked.calibration.readUs / asIs.plainUs;
    const cpuRatio = Math.max(checked.ratio, crossCheck ?? 0);
    const ratioOfMedians = b.cpuUsPerReq / a.cpuUsPerReq;
    const perRepP50Delta = Array.from({ length: reps }, (_, i) => latencyOf(frOf('guarded')[i]!.result).p50 - latencyOf(frOf('plain')[i]!.result).p50);
    const row = (id: string, x: ReturnType<typeof per>): (string | number)[] => [
      id,
      fmt(x.throughputRps, 0),
      id === 'plain' ? '-' : pct(x.throughputRps / a.throughputRps),
      fmt(x.throughputP50Ms, 0),
      fmt(x.cpuUsPerReq, 1),
      id === 'plain' ? '-' : ratioStr(asIs.ratio, 3),
      fmt(x.fixedRate.rps, 0),
      ms3(x.fixedRate.p50),
      ms3(x.fixedRate.p99),
      id === 'plain' ? '-' : signed(x.fixedRate.p50 - a.fixedRate.p50),
      fmt(x.fixedRate.cpu, 1),
    ];
    const perProcessStr = (t: TopologyResult): string => t.perProcess.map((x) => x.toFixed(2)).join(' / ');
    const topologyRow = (t: TopologyResult): (string | number)[] => [
      TOPOLOGY_LABEL[t.id],
      fmt(t.plainUs, 1),
      fmt(t.guardedUs, 1),
      signed(t.guardedUs - t.plainUs, 1),
      ratioStr(t.ratio, 3),
      perProcessStr(t),
      `${t.calibration.readUs.toFixed(1)} µs${t.calibration.withinTolerance ? '' : ' (off)'}`,
    ];
    const topologyValue = (t: TopologyResult): string =>
      `${t.id}: ${t.guardedUs.toFixed(1)} vs ${t.plainUs.toFixed(1)} µs, ${ratioStr(t.ratio, 3)} (reps ${perProcessStr(t)}), a known ${CALIBRATION_SPIN_US} µs read ${t.calibration.readUs.toFixed(1)} µs${t.calibration.withinTolerance ? '' : ' (calibration off)'}`;
    const notes = [
      ...configs.map((c) => `${c.id}: ${c.label}`),
      `CPU µs/req is the gateway process at saturation (autocannon; medians over every ${G.windowS} s window). "CPU vs plain" is the median over the reps' gateway processes of each process's median ratio over ${G.pairs} alternating pairs of windows (as is, the ratio of the two medians: ${ratioStr(ratioOfMedians, 3)}). "@1k" is the CPU at ≈1,000 req/s (wrk, think time) on the main gateway, where cold caches inflate it.`,
      `Each topology ends with a calibration: a gateway process with benchmarks/calibration-spin.mjs preloaded spends a known ${CALIBRATION_SPIN_US} µs just before writing each answer whose request asks for it; "known ${CALIBRATION_SPIN_US} µs reads" is the median paired difference in its CPU per request (within tolerance: ±${Math.round(CALIBRATION_TOLERANCE * 100)}%). The limit is checked ${checked.id === 'held' ? 'on the larger of the held ratio and the cross-check below' : 'on the load core as is (it could not be held)'}, and only when that reading's calibration is within tolerance.`,
      ...(crossCheck !== undefined
        ? [
            `cross-check: the held difference scaled by its calibration (${signed(checked.guardedUs - checked.plainUs, 1)} × ${CALIBRATION_SPIN_US} / ${checked.calibration.readUs.toFixed(1)} µs) over the plain config's CPU as is (${asIs.plainUs.toFixed(1)} µs): ${ratioStr(crossCheck, 3)}; the limit is checked on the larger of it and the held ratio: ${ratioStr(cpuRatio, 3)}`,
          ]
        : []),
      `per-rep p50 guarded − plain at ≈1,000 req/s: ${perRepP50Delta.map((x) => signed(x)).join(' / ')} ms`,
      'The guarded answer carries hook_results (2 hooks, 4 checks): a larger body to serialize and send; that is part of what a guardrail costs.',
    ];
    for (const [id, x] of [['plain', a], ['guarded', b]] as const) {
      if (x.throughputNon2xx || x.fixedRate.errors) notes.push(`! ${id}: ${x.throughputNon2xx} non-2xx/errors at saturation, ${x.fixedRate.errors} at the fixed rate`);
    }
    return {
      rows: [],
      tables: [
        {
          header: ['config', 'max req/s', 'vs plain', 'p50 ms @max', 'CPU µs/req', 'CPU vs plain (as is)', 'req/s @1k', 'p50 ms @1k', 'p99 ms @1k', 'p50 − plain', 'CPU µs/req @1k'],
          rows: [row('plain', a), row('guarded', b), ['direct', '-', '-', '-', '-', '-', fmt(d.rps, 0), ms3(d.p50), ms3(d.p99), '-', '-']],
        },
        {
          header: ['load core', 'plain CPU µs/req', 'guarded CPU µs/req', 'guarded − plain', 'CPU vs plain', 'per process', `known ${CALIBRATION_SPIN_US} µs reads`],
          rows: topologies.map(topologyRow),
        },
      ],
      checks: [
        {
          target: `Input (regexMatch + wordCount) + output (contains + characterCount) guardrails cost ≤ ${Math.round((GUARDRAILS_CPU_LIMIT - 1) * 100)}% more gateway CPU per request (on a calibrated reading)`,
          value: `${ratioStr(cpuRatio, 3)} (${[...topologies.map(topologyValue), ...(crossCheck !== undefined ? [`cross-check ${ratioStr(crossCheck, 3)}`] : [])].join('; ')})`,
          met: checked.calibration.withinTolerance && cpuRatio <= GUARDRAILS_CPU_LIMIT,
        },
      ],
      notes,
      data: {
        reps,
        windowS: G.windowS,
        pairs: G.pairs,
        ratioOfMedians,
        fixedRateS: G.fixedRateS,
        guardrails: GUARDRAILS,
        limit: GUARDRAILS_CPU_LIMIT,
        calibrationSpinUs: CALIBRATION_SPIN_US,
        calibrationTolerance: CALIBRATION_TOLERANCE,
        checkedTopology: checked.id,
        crossCheck,
        cpuRatio,
        perRepCpuRatio: checked.perProcess,
        topologies,
        perRepP50Delta,
        plain: a,
        guarded: b,
        direct: d,
        throughputReps: tp,
        fixedRateReps: fr.map((r) => ({ ...r, result: { ...r.result, raw: undefined } })),
      },
    };
  },
};
