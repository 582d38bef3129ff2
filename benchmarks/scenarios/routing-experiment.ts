/** Scenario `routing-experiment`: see benchmarks/README.md. */
import { fmt, runOpenLoop, withCpuAndCores, type OpenLoopResult } from '../lib.js';
import { CFG } from '../config.js';
import { pct, ms3, statusSummary, type Scenario } from '../scenario.js';

export const routingExperiment: Scenario = {
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
