/** Scenario `throughput`: see benchmarks/README.md. */
import { fmt, median, readRssMb, readStatusKb, runAutocannon } from '../lib.js';
import { CFG } from '../config.js';
import { pct, throughputRep, rotated, type Scenario, type ThroughputRep } from '../scenario.js';

export const throughput: Scenario = {
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
