/** Scenario `routing-overhead`: see benchmarks/README.md. */
import { fetchOnce, fmt, median, runAutocannon } from '../lib.js';
import { CFG } from '../config.js';
import {
  pct,
  signed,
  throughputRep,
  fixedRateRun,
  rotated,
  latencyOf,
  errorsOf,
  ms3,
  ratioStr,
  type Scenario,
  type ThroughputRep,
  type FixedRateRep,
} from '../scenario.js';

interface RoutingConfig {
  id: string;
  label: string;
  config: Record<string, unknown>;
}

export const routingOverhead: Scenario = {
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
