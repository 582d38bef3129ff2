/** Scenario `usage-limits`: see benchmarks/README.md. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { fetchOnce, fmt, median, readCpuTicks, redisCommands, runAutocannon, withCpuAndCores, type HttpTarget, type ThroughputResult } from '../lib.js';
import { CFG } from '../config.js';
import { ratioStr, rotated, type Scenario } from '../scenario.js';

/** The issue's limit: gateway CPU per request under one active tokens policy (Redis) ÷ the same without it. */
export const USAGE_LIMITS_CPU_LIMIT = 1.2;

const POLICY_ID = '6f9d0c2e-1b3a-4c5d-8e7f-901a2b3c4d5e';
const KEY = 'sk-sluice-bench-limited-0123456789';
const OTHER_KEY = 'sk-sluice-bench-other-ws-0123456789';
const POLICY = {
  name: 'Bench tokens',
  type: 'tokens',
  workspace_id: 'ws-bench',
  group_by: [{ key: 'api_key' }],
  credit_limit: 1e15,
  periodic_reset: 'monthly',
};

interface Rep {
  rep: number;
  target: string;
  result: ThroughputResult;
  gatewayCpuUsPerReq: number;
  redisCpuUsPerReq?: number;
}

export const usageLimits: Scenario = {
  id: 'usage-limits',
  title: `Usage limits: the same request with Redis, with one active tokens policy (reserve + settle in Redis) vs the policy archived, in one gateway process — throughput (autocannon, ${CFG.throughput.connections} connections, ${CFG.usageLimits.throughputS} s per rep), ${CFG.reps} interleaved reps`,
  async run(ctx) {
    const U = ctx.cfg.usageLimits;
    const reps = ctx.cfg.reps;
    const notes: string[] = [];
    // Redis db 14 by default, flushed before and after (the cache scenario uses 15).
    const [, info] = await redisCommands(U.redisUrl, [['FLUSHDB'], ['INFO', 'server']]);
    let redisPid: number | undefined = Number(/process_id:(\d+)/.exec(info ?? '')?.[1]) || undefined;
    try {
      if (redisPid) readCpuTicks(redisPid);
    } catch {
      notes.push(`redis-server (pid ${redisPid}) is not visible from here: its CPU is not measured and counts as noise.`);
      redisPid = undefined;
    }
    const dir = mkdtempSync(path.join(tmpdir(), 'sluice-bench-limits-'));
    const bootstrap = path.join(dir, 'bootstrap.yaml');
    writeFileSync(
      bootstrap,
      `api_keys:
  - { key: ${KEY}, name: bench-limited, workspace_id: ws-bench }
  - { key: ${OTHER_KEY}, name: bench-other, workspace_id: ws-other }
usage_limits:
  - id: ${POLICY_ID}
${Object.entries(POLICY)
  .map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`)
  .join('\n')}
`,
    );
    const gw = await ctx.startGateway({ REDIS_URL: U.redisUrl, GATEWAY_BOOTSTRAP: bootstrap }, 'gateway (redis, usage limits)');
    const api = async (method: 'GET' | 'PUT' | 'DELETE', body?: unknown): Promise<any> => {
      const res = await request(`http://127.0.0.1:${gw.port}/v1/policies/usage-limits/${POLICY_ID}`, {
        method,
        headers: { 'x-gateway-api-key': KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = (await res.body.json()) as any;
      if (res.statusCode !== 200) throw new Error(`usage-limits: ${method} policy answered ${res.statusCode} ${JSON.stringify(json)}`);
      return json;
    };
    /** With the policy active or archived: the request is the same, only the stage's work differs. */
    const setPolicy = async (active: boolean): Promise<void> => {
      if (active) await api('PUT', { ...POLICY, status: 'active' });
      else await api('DELETE');
    };
    const base = ctx.configTarget(ctx.upstreamConfig(''), { gateway: gw });
    const withKey = (t: HttpTarget, key: string, name: string): HttpTarget => ({
      ...t,
      name,
      headers: { ...t.headers, 'x-gateway-api-key': key },
      wrkArgs: [t.wrkArgs[0]!, t.wrkArgs[1]!, key],
    });
    const limited = withKey(base, KEY, 'limited');
    const unmatched = withKey(base, OTHER_KEY, 'unmatched');
    const none = withKey(base, KEY, 'none');
    /** The contenders: the policy state each needs, and its target. */
    const contenders: { t: HttpTarget; active: boolean }[] = [
      { t: none, active: false },
      { t: limited, active: true },
      { t: unmatched, active: true },
    ];
    try {
      // Smoke: under the active policy the usage is counted (the group is the key's name); archived, it is not.
      await setPolicy(true);
      const r = await fetchOnce(limited);
      if (r.status !== 200) throw new Error(`usage-limits: limited smoke request: ${r.status} ${r.body.slice(0, 300)}`);
      const used = async (): Promise<number> => (await api('GET')).value_key_usage_map['bench-limited'] ?? 0;
      let counted = 0;
      for (let i = 0; i < 50 && counted === 0; i++) {
        counted = await used();
        if (counted === 0) await new Promise((res) => setTimeout(res, 20));
      }
      if (!(counted > 0)) throw new Error('usage-limits: the limited request was not counted');
      await fetchOnce(unmatched);
      await setPolicy(false);
      await fetchOnce(none);
      await new Promise((res) => setTimeout(res, 100));
      if ((await used()) !== counted) throw new Error('usage-limits: a request was counted while the policy was archived, or by the other workspace');

      ctx.log(`  warm-up ${U.warmupS} s each`);
      for (const c of contenders) {
        await setPolicy(c.active);
        await runAutocannon(c.t, { connections: ctx.cfg.throughput.connections, durationS: U.warmupS });
      }
      const runs: Rep[] = [];
      for (let rep = 1; rep <= reps; rep++) {
        for (const c of rotated(contenders, rep)) {
          await setPolicy(c.active);
          const label = `usage-limits ${c.t.name} rep ${rep}`;
          await ctx.quietGate(label);
          const pids: Record<string, number> = { ...ctx.otherPids(gw), gw: gw.pid, up: ctx.upstream.pid };
          if (redisPid) pids.redis = redisPid;
          const m = await withCpuAndCores(pids, () => runAutocannon(c.t, { connections: ctx.cfg.throughput.connections, durationS: U.throughputS }));
          ctx.recordNoise(label, m);
          const n = m.result.requests;
          const x: Rep = {
            rep,
            target: c.t.name,
            result: m.result,
            gatewayCpuUsPerReq: (m.cpu.gw! / n) * 1e6,
            ...(redisPid ? { redisCpuUsPerReq: (m.cpu.redis! / n) * 1e6 } : {}),
          };
          if (m.result.non2xx || m.result.errors) ctx.log(`  ! ${c.t.name}: ${m.result.non2xx} non-2xx, ${m.result.errors} errors`);
          ctx.log(
            `  rep ${rep} ${c.t.name.padEnd(10)} ${m.result.rps.toFixed(0).padStart(6)} req/s  gateway cpu ${x.gatewayCpuUsPerReq.toFixed(1)} µs/req` +
              (x.redisCpuUsPerReq !== undefined ? `  redis cpu ${x.redisCpuUsPerReq.toFixed(1)} µs/req` : ''),
          );
          runs.push(x);
        }
      }
      const of = (name: string): Rep[] => runs.filter((x) => x.target === name);
      const med = (name: string, f: (x: Rep) => number | undefined): number => median(of(name).map((x) => f(x) ?? NaN));
      const cpu = (name: string): number => med(name, (x) => x.gatewayCpuUsPerReq);
      const ratio = cpu('limited') / cpu('none');
      const perRep = Array.from({ length: reps }, (_, i) => of('limited')[i]!.gatewayCpuUsPerReq / of('none')[i]!.gatewayCpuUsPerReq);
      const unmatchedRatio = cpu('unmatched') / cpu('none');
      const rows = contenders.map(({ t }) => [
        t.name,
        fmt(med(t.name, (x) => x.result.rps), 0),
        fmt(cpu(t.name), 1),
        t.name === 'none' ? '-' : ratioStr(cpu(t.name) / cpu('none'), 3),
        redisPid ? fmt(med(t.name, (x) => x.redisCpuUsPerReq), 1) : '-',
        `${fmt(med(t.name, (x) => x.result.latencyMs.p50), 0)} / ${fmt(med(t.name, (x) => x.result.latencyMs.p99), 0)}`,
      ]);
      notes.push(
        'none: the policy archived (no active policy: the stage is the identity); limited: the policy active and matching (one Lua call to reserve, one to settle); unmatched: the policy active, the request\'s key in another workspace (the stage looks and finds none).',
        `per-rep CPU ratio limited ÷ none: ${perRep.map((x) => x.toFixed(3)).join(' / ')}; unmatched ÷ none: ${ratioStr(unmatchedRatio, 3)}`,
        'The same gateway process (REDIS_URL, the bootstrap file declaring the keys and the policy) serves all three; the policy is switched with PUT / DELETE before each run.',
      );
      ctx.commands['usage-limits'] = `autocannon programmatic API: POST with x-gateway-config ${JSON.stringify(ctx.upstreamConfig(''))}, ${ctx.cfg.throughput.connections} connections, ${U.throughputS} s per rep; the policy ${JSON.stringify(POLICY)}`;
      return {
        rows: [],
        tables: [{ header: ['contender', 'req/s', 'gateway CPU µs/req', 'CPU vs none', 'redis CPU µs/req', 'p50 / p99 ms'], rows }],
        checks: [
          {
            target: `One active tokens policy (Redis) costs ≤ ${Math.round((USAGE_LIMITS_CPU_LIMIT - 1) * 100)}% more gateway CPU per request`,
            value: `${cpu('limited').toFixed(1)} vs ${cpu('none').toFixed(1)} µs (${ratioStr(ratio, 3)}; reps ${perRep.map((x) => x.toFixed(2)).join(' / ')})`,
            met: ratio <= USAGE_LIMITS_CPU_LIMIT,
          },
        ],
        notes,
        data: {
          reps,
          throughputS: U.throughputS,
          redisUrl: U.redisUrl,
          policy: POLICY,
          limit: USAGE_LIMITS_CPU_LIMIT,
          cpuRatio: ratio,
          unmatchedRatio,
          perRepCpuRatio: perRep,
          medians: Object.fromEntries(contenders.map(({ t }) => [t.name, { rps: med(t.name, (x) => x.result.rps), gatewayCpuUsPerReq: cpu(t.name), redisCpuUsPerReq: med(t.name, (x) => x.redisCpuUsPerReq) }])),
          perRep: runs.map((x) => ({ ...x, result: { ...x.result, raw: undefined } })),
        },
      };
    } finally {
      await gw.stop();
      rmSync(dir, { recursive: true, force: true });
      await redisCommands(U.redisUrl, [['FLUSHDB']]).catch(() => undefined);
    }
  },
};
