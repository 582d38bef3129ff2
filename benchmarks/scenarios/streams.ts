/** Scenario `streams`: see benchmarks/README.md. */
import { keepAliveAgent, median, percentile, timeStreams, withCpuAndCores } from '../lib.js';
import { CFG, STREAM_BODY } from '../config.js';
import { signed, type Row, type Scenario } from '../scenario.js';

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

export const streams: Scenario = {
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
