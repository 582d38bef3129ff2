/** Scenario `log-warn`: see benchmarks/README.md. */
import { runAutocannon } from '../lib.js';
import { CFG } from '../config.js';
import { pct, signed, throughputRep, fixedRateRun, latencyOf, type Row, type Scenario } from '../scenario.js';

export const logWarn: Scenario = {
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
