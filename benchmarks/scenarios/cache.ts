/** Scenario `cache`: see benchmarks/README.md. */
import {
  ManagedProcess,
  fetchOnce,
  fmt,
  median,
  readCpuTicks,
  readRssMb,
  redisCommands,
  runAutocannon,
  withCpuAndCores,
  type HttpTarget,
  type ThroughputResult,
} from '../lib.js';
import { CFG } from '../config.js';
import { pct, ratioStr, type Check, type Scenario } from '../scenario.js';

interface CacheRep {
  rep: number;
  target: string;
  result: ThroughputResult;
  gatewayCpuUsPerReq: number;
  upstreamCpuUsPerReq: number;
  redisCpuUsPerReq?: number;
}

export const cacheScenario: Scenario = {
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
