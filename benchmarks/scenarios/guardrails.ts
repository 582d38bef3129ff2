/** Scenario `guardrails` (issue 11): see benchmarks/README.md. */
import { fetchOnce, fmt, median, runAutocannon, type HttpTarget, type ManagedProcess } from '../lib.js';
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
  type ThroughputRep,
} from '../scenario.js';

/** The limit: gateway CPU per request with the guardrails ÷ without, same run. */
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

export const guardrails: Scenario = {
  id: 'guardrails',
  title: `Guardrails (issue 11): one target with vs without an input guardrail (regexMatch + wordCount) and an output guardrail (contains + characterCount), deny on, non-stream JSON — throughput (autocannon, ${CFG.throughput.connections} connections, ${CFG.guardrails.pairs} alternating pairs of ${CFG.guardrails.windowS} s windows per rep, each rep on a new gateway process) and latency at ≈1,000 req/s (wrk, ${CFG.guardrails.fixedRateS} s per rep), ${CFG.reps} interleaved reps`,
  async run(ctx) {
    const G = ctx.cfg.guardrails;
    const reps = ctx.cfg.reps;
    const good = ctx.upstreamConfig('');
    const configs = [
      { id: 'plain', label: 'single target, no guardrails (baseline)', config: good },
      { id: 'guarded', label: 'the same target + input_guardrails [regexMatch, wordCount] + output_guardrails [contains, characterCount], deny: true', config: { ...good, ...GUARDRAILS } },
    ];
    /** The two contenders on `gateway` (the main one by default). */
    const pairOn = (gateway?: ManagedProcess): [HttpTarget, HttpTarget] => [
      ctx.configTarget(configs[0]!.config, { name: 'plain', gateway }),
      ctx.configTarget(configs[1]!.config, { name: 'guarded', gateway }),
    ];
    const [plain, guarded] = pairOn();
    const direct = ctx.directTarget();
    await smoke(plain, guarded);

    // Saturation: each rep on a gateway process of its own, checked and warmed with both configs. The
    // ratio is steady within a process but differs between processes of one build (benchmarks/README.md),
    // so the medians are taken over processes.
    // Within a process the CPU per request still moves by ±25% between windows of the same config
    // (host noise on these machines), so each process is measured in short alternating windows and
    // its ratio is the median of the per-pair ratios: noise slower than a pair cancels out.
    const tp: ThroughputRep[] = [];
    const perProcess: number[] = [];
    for (let rep = 1; rep <= reps; rep++) {
      const proc = await ctx.startGateway({}, 'gateway (guardrails rep)');
      try {
        const pair = pairOn(proc);
        await smoke(...pair);
        ctx.log(`  rep ${rep}: a new gateway process (pid ${proc.pid}), warm-up ${G.warmupS} s each`);
        for (const t of pair) await runAutocannon(t, { connections: ctx.cfg.throughput.connections, durationS: G.warmupS });
        const pairRatios: number[] = [];
        for (let i = 0; i < G.pairs; i++) {
          const cpu: Record<string, number> = {};
          for (const t of rotated(pair, rep + i)) {
            const r = await throughputRep(ctx, t, rep, proc, G.windowS);
            tp.push(r);
            cpu[t.name] = r.gatewayCpuUsPerReq;
          }
          pairRatios.push(cpu.guarded! / cpu.plain!);
        }
        const processRatio = median(pairRatios);
        perProcess.push(processRatio);
        ctx.log(`  rep ${rep}: guarded ÷ plain per pair ${pairRatios.map((x) => x.toFixed(2)).join(' ')}; median ${processRatio.toFixed(3)}`);
      } finally {
        await proc.stop(2000);
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
    // The checked figure: the median over processes of each process's median paired ratio.
    const cpuRatio = median(perProcess);
    const ratioOfMedians = b.cpuUsPerReq / a.cpuUsPerReq;
    const perRepP50Delta = Array.from({ length: reps }, (_, i) => latencyOf(frOf('guarded')[i]!.result).p50 - latencyOf(frOf('plain')[i]!.result).p50);
    const row = (id: string, x: ReturnType<typeof per>): (string | number)[] => [
      id,
      fmt(x.throughputRps, 0),
      id === 'plain' ? '-' : pct(x.throughputRps / a.throughputRps),
      fmt(x.throughputP50Ms, 0),
      fmt(x.cpuUsPerReq, 1),
      id === 'plain' ? '-' : ratioStr(cpuRatio, 3),
      fmt(x.fixedRate.rps, 0),
      ms3(x.fixedRate.p50),
      ms3(x.fixedRate.p99),
      id === 'plain' ? '-' : signed(x.fixedRate.p50 - a.fixedRate.p50),
      fmt(x.fixedRate.cpu, 1),
    ];
    const notes = [
      ...configs.map((c) => `${c.id}: ${c.label}`),
      `CPU µs/req is the gateway process at saturation (autocannon; medians over every ${G.windowS} s window). "CPU vs plain", the figure the limit is checked on, is the median over the reps' gateway processes of each process's median ratio over ${G.pairs} alternating pairs of windows (the ratio of the two medians: ${ratioStr(ratioOfMedians, 3)}). "@1k" is the CPU at ≈1,000 req/s (wrk, think time) on the main gateway, where cold caches inflate it.`,
      `per-process CPU ratio guarded ÷ plain (median of its pairs): ${perProcess.map((x) => x.toFixed(3)).join(' / ')}; per-rep p50 guarded − plain at ≈1,000 req/s: ${perRepP50Delta.map((x) => signed(x)).join(' / ')} ms`,
      'The guarded answer carries hook_results (2 hooks, 4 checks): a larger body to serialize and send; that is part of what a guardrail costs.',
    ];
    for (const [id, x] of [['plain', a], ['guarded', b]] as const) {
      if (x.throughputNon2xx || x.fixedRate.errors) notes.push(`! ${id}: ${x.throughputNon2xx} non-2xx/errors at saturation, ${x.fixedRate.errors} at the fixed rate`);
    }
    return {
      rows: [],
      tables: [
        {
          header: ['config', 'max req/s', 'vs plain', 'p50 ms @max', 'CPU µs/req', 'CPU vs plain', 'req/s @1k', 'p50 ms @1k', 'p99 ms @1k', 'p50 − plain', 'CPU µs/req @1k'],
          rows: [row('plain', a), row('guarded', b), ['direct', '-', '-', '-', '-', '-', fmt(d.rps, 0), ms3(d.p50), ms3(d.p99), '-', '-']],
        },
      ],
      checks: [
        {
          target: `Input (regexMatch + wordCount) + output (contains + characterCount) guardrails cost ≤ ${Math.round((GUARDRAILS_CPU_LIMIT - 1) * 100)}% more gateway CPU per request`,
          value: `${b.cpuUsPerReq.toFixed(1)} vs ${a.cpuUsPerReq.toFixed(1)} µs (${ratioStr(cpuRatio, 3)}; reps ${perProcess.map((x) => x.toFixed(2)).join(' / ')})`,
          met: cpuRatio <= GUARDRAILS_CPU_LIMIT,
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
        cpuRatio,
        perRepCpuRatio: perProcess,
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
