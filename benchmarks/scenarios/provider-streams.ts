/** Scenario `provider-streams`: see benchmarks/README.md. */
import { fetchOnce, keepAliveAgent, percentile, timeStreams, withCpuAndCores, type HttpTarget, type ManagedProcess } from '../lib.js';
import { CFG } from '../config.js';
import { ms3, rotated, signed, type Check, type Scenario } from '../scenario.js';

/** The added first-byte time of a native provider over the OpenAI pass-through. */
const TARGET_MS = 0.5;

interface Contender {
  id: 'openai' | 'anthropic' | 'bedrock';
  target: HttpTarget;
}

/**
 * The same streamed chat request through the gateway, routed by headers to the fake upstream in the
 * provider's own wire format: OpenAI SSE (the pass-through), Anthropic Messages SSE, Bedrock
 * ConverseStream event-stream (SigV4-signed by the gateway; the fake upstream does not verify).
 */
function contenders(gateway: ManagedProcess, upstreamPort: number, chunks: number): Contender[] {
  const base = `http://127.0.0.1:${upstreamPort}/s/${chunks}/0`;
  const url = `http://127.0.0.1:${gateway.port}/v1/chat/completions`;
  const common = { 'x-gateway-api-key': CFG.apiKey, 'content-type': 'application/json' };
  const body = (model: string): string => `{"model":"${model}","stream":true,"messages":[{"role":"user","content":"hello"}]}`;
  const target = (name: string, headers: Record<string, string>, model: string): HttpTarget => ({
    name,
    url,
    method: 'POST',
    headers: { ...common, ...headers },
    body: body(model),
    proc: gateway,
    wrkArgs: [],
  });
  return [
    { id: 'openai', target: target('openai', { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${base}/v1`, authorization: 'Bearer sk-bench' }, 'gpt-4o-mini') },
    { id: 'anthropic', target: target('anthropic', { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${base}/v1`, authorization: 'Bearer sk-bench' }, 'claude-bench') },
    {
      id: 'bedrock',
      target: target(
        'bedrock',
        {
          'x-gateway-provider': 'bedrock',
          'x-gateway-custom-host': base,
          'x-gateway-cloud-b-access-key-id': 'AKIDBENCHEXAMPLE',
          'x-gateway-cloud-b-secret-access-key': 'bench-secret-access-key',
          'x-gateway-cloud-b-region': 'us-east-1',
        },
        'anthropic.claude-3-5-sonnet-20240620-v1:0',
      ),
    },
  ];
}

/** One stream per contender before anything is timed: 200, every chunk, [DONE] last, the same chunk count. */
async function smoke(cs: Contender[], chunks: number): Promise<void> {
  for (const c of cs) {
    const r = await fetchOnce(c.target);
    const datas = r.body.split('\n').filter((l) => l.startsWith('data: '));
    const texts = datas.filter((l) => l.includes('"content":" tok')).length;
    if (r.status !== 200 || datas[datas.length - 1] !== 'data: [DONE]' || texts !== chunks - 2) {
      throw new Error(`provider-streams: ${c.id} smoke stream failed: status ${r.status}, ${texts} text chunks (want ${chunks - 2}): ${r.body.slice(0, 300)}`);
    }
  }
}

export const providerStreams: Scenario = {
  id: 'provider-streams',
  title: `Provider streams: ${CFG.providerStreams.chunks}-chunk stream through the gateway to openai (pass-through), anthropic (Messages SSE) and bedrock (ConverseStream event-stream, SigV4), back to back, sequential on one keep-alive connection`,
  async run(ctx) {
    const s = ctx.cfg.providerStreams;
    const cs = contenders(ctx.gateway, ctx.upstream.port!, s.chunks);
    await smoke(cs, s.chunks);
    const agent = keepAliveAgent();
    const per = Math.ceil(s.requests / ctx.cfg.reps);
    const samples: Record<string, { ttfbMs: number; totalMs: number; bytes: number }[]> = {};
    const cpuUs: Record<string, number[]> = {};
    const cpuS: Record<string, number> = {};
    const repTtfbP50: Record<string, number[]> = {};
    for (const c of cs) {
      samples[c.id] = [];
      cpuUs[c.id] = [];
      cpuS[c.id] = 0;
      repTtfbP50[c.id] = [];
    }
    try {
      for (const c of cs) await timeStreams(c.target, s.warmup, agent);
      for (let rep = 1; rep <= ctx.cfg.reps; rep++) {
        for (const c of rotated(cs, rep)) {
          const label = `provider-streams ${c.id} rep ${rep}`;
          await ctx.quietGate(label);
          const m = await withCpuAndCores({ ...ctx.otherPids(ctx.gateway), gw: ctx.gateway.pid, up: ctx.upstream.pid }, () => timeStreams(c.target, per, agent));
          ctx.recordNoise(label, m);
          samples[c.id]!.push(...m.result);
          cpuUs[c.id]!.push((m.cpu.gw! / per) * 1e6);
          cpuS[c.id]! += m.cpu.gw!;
          repTtfbP50[c.id]!.push(percentile(m.result.map((x) => x.ttfbMs), 50));
        }
      }
    } finally {
      await agent.close();
    }
    const stat = (id: string, key: 'ttfbMs' | 'totalMs', p: number): number => percentile(samples[id]!.map((x) => x[key]), p);
    const figures = Object.fromEntries(
      cs.map((c) => [
        c.id,
        {
          n: samples[c.id]!.length,
          ttfbP50: stat(c.id, 'ttfbMs', 50),
          ttfbP99: stat(c.id, 'ttfbMs', 99),
          totalP50: stat(c.id, 'totalMs', 50),
          totalP99: stat(c.id, 'totalMs', 99),
          // Over all reps: /proc CPU time comes in 10 ms ticks, too coarse for one rep's figure.
          gatewayCpuUsPerStream: (cpuS[c.id]! / samples[c.id]!.length) * 1e6,
          gatewayCpuUsPerStreamReps: cpuUs[c.id],
          ttfbP50Reps: repTtfbP50[c.id],
          bytesPerStream: samples[c.id]![0]?.bytes,
        },
      ]),
    );
    const base = figures.openai!;
    const added = Object.fromEntries(
      cs
        .filter((c) => c.id !== 'openai')
        .map((c) => {
          const f = figures[c.id]!;
          return [
            c.id,
            {
              ttfbP50: f.ttfbP50 - base.ttfbP50,
              ttfbP99: f.ttfbP99 - base.ttfbP99,
              totalP50: f.totalP50 - base.totalP50,
              cpuUsPerStream: f.gatewayCpuUsPerStream - base.gatewayCpuUsPerStream,
              ttfbP50Reps: f.ttfbP50Reps!.map((x, i) => x - base.ttfbP50Reps![i]!),
            },
          ];
        }),
    );
    for (const c of cs) {
      const f = figures[c.id]!;
      ctx.log(`  ${c.id.padEnd(9)} ttfb p50 ${ms3(f.ttfbP50)} p99 ${ms3(f.ttfbP99)} ms; total p50 ${ms3(f.totalP50)} ms; gateway cpu ${f.gatewayCpuUsPerStream.toFixed(0)} µs/stream (n=${f.n})`);
    }
    const table = {
      header: ['through the gateway', 'TTFB p50 ms', 'TTFB p99 ms', 'total p50 ms', 'total p99 ms', 'TTFB p50 vs openai', 'TTFB p99 vs openai', 'total p50 vs openai', 'gateway CPU µs/stream', 'vs openai'],
      rows: cs.map((c) => {
        const f = figures[c.id]!;
        const a = added[c.id];
        return [
          c.id,
          ms3(f.ttfbP50),
          ms3(f.ttfbP99),
          ms3(f.totalP50),
          ms3(f.totalP99),
          a ? `${signed(a.ttfbP50)} ms (reps ${a.ttfbP50Reps.map((x) => signed(x)).join(' / ')})` : 'baseline',
          a ? `${signed(a.ttfbP99)} ms` : '',
          a ? `${signed(a.totalP50)} ms` : '',
          f.gatewayCpuUsPerStream.toFixed(0),
          a ? `${signed(a.cpuUsPerStream, 0)} µs` : '',
        ];
      }),
    };
    const checks: Check[] = Object.entries(added).map(([id, a]) => ({
      target: `streamed ${id} request: TTFB p50 added vs the openai pass-through through the gateway`,
      value: `${signed(a.ttfbP50)} ms (≤ ${TARGET_MS} ms)`,
      met: a.ttfbP50 <= TARGET_MS,
    }));
    const notes = [
      `${per} streams per contender and rep, ${ctx.cfg.reps} reps, contenders rotated each rep; each stream carries ${s.chunks} chat chunks for the client (the client did not ask for usage). Gateway CPU per stream is the total over the reps ÷ streams (per-rep figures in the JSON).`,
    ];
    const bytes = new Set(cs.map((c) => figures[c.id]!.bytesPerStream));
    if (bytes.size > 1) notes.push(`bytes per stream received by the client differ: ${cs.map((c) => `${c.id} ${figures[c.id]!.bytesPerStream}`).join(', ')} (ids and model names differ in length).`);
    return { rows: [], tables: [table], checks, notes, data: { chunks: s.chunks, streamsPerContenderPerRep: per, figures, addedVsOpenAI: added } };
  },
};
