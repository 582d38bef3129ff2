/** Scenario `fixed-rate`: see benchmarks/README.md. */
import { ManagedProcess, WRK_INSTALL_HINT, findWrk, median, runAutocannon, type HttpTarget } from '../lib.js';
import { CFG } from '../config.js';
import { signed, fixedRateRun, rotated, latencyOf, errorsOf, type Row, type Scenario, type FixedRateRep } from '../scenario.js';

export const fixedRate: Scenario = {
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
