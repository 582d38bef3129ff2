import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { CHAT_BODY, configHeaders, upstreamTarget, type GatewayContext, type Scenario } from '../scenario.js';

const KEY = 'sk-sluice-bench-limited-0123456789';
const POLICY = {
  id: '6f9d0c2e-1b3a-4c5d-8e7f-901a2b3c4d5e',
  name: 'Bench tokens',
  type: 'tokens',
  workspace_id: 'ws-bench',
  group_by: [{ key: 'api_key' }],
  credit_limit: 1e15,
  periodic_reset: 'monthly',
};

/** db 14 for the gateway under test, 13 for the ref's; emptied before and after. */
const redisUrl = (slot: number): string => `${process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'}/${14 - slot}`;

async function withRedis<T>(slot: number, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis(redisUrl(slot), { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

/** Usage counted in Redis: a reserve and a settle (one Lua call each) on every request. */
export const usageLimits: Scenario = {
  id: 'usage-limits',
  title: 'The throughput request as an inline config, from a key under one active tokens usage-limit policy kept in Redis.',
  request: (up) => ({ headers: configHeaders(upstreamTarget(up), KEY), body: CHAT_BODY }),
  async gatewayEnv(ctx: GatewayContext) {
    await withRedis(ctx.slot, (r) => r.flushdb());
    const bootstrap = path.join(ctx.dir, 'bootstrap.yaml');
    const policy = Object.entries(POLICY).map(([k, v], i) => `${i ? '    ' : '  - '}${k}: ${JSON.stringify(v)}`);
    writeFileSync(bootstrap, [`api_keys:`, `  - { key: ${KEY}, name: bench-limited, workspace_id: ws-bench }`, `usage_limits:`, ...policy, ''].join('\n'));
    return { REDIS_URL: redisUrl(ctx.slot), GATEWAY_BOOTSTRAP: bootstrap };
  },
  async check(a, ctx) {
    if (a.status !== 200) return `status ${a.status}`;
    for (let i = 0; i < 50; i++) {
      if ((await withRedis(ctx.slot, (r) => r.keys('sluice:use:*'))).length) return undefined;
      await new Promise((res) => setTimeout(res, 20));
    }
    return 'no usage counted in Redis (sluice:use:*)';
  },
  cleanup: (ctx) => withRedis(ctx.slot, (r) => r.flushdb()).then(() => undefined),
};
