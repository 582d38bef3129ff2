/**
 * Redis faults seen from the outside: a gateway whose Redis is down at start, stuck, gone while
 * serving, and back again. Every Redis here is a throw-away redis-server on a spare port.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { freePort, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { chatBody, metricSum, post, scrape, until, type Answer } from '../cache-http/_http.js';
import { GatewayProcess, PROCESS_KEY } from '../scale/_process.js';

/** Warn and error lines that mention Redis. */
const redisComplaints = (logs: Record<string, any>[]): Record<string, any>[] =>
  logs.filter((l) => l.level >= 40 && /redis/i.test(JSON.stringify(l)));

describe('Redis down when a gateway process starts', () => {
  let fake: FakeOpenAI;
  let late: RedisServer | undefined;
  const procs: GatewayProcess[] = [];

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await fake?.close();
    await late?.close();
  });

  it('refuses to start naming Redis and the URL; with --redis-optional true it starts, serves, and recovers when Redis comes up', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const strict = GatewayProcess.serve(['--port', '0', '--redis', url]);
    const optional = GatewayProcess.serve(['--port', '0', '--redis', url, '--redis-optional', 'true']);
    procs.push(strict, optional);

    // strict: exits non-zero (after its bounded wait for Redis) with a clear message, never listens
    const exit = await strict.waitExit(15_000);
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(strict.stderr).toMatch(/Redis/);
    expect(strict.stderr).toContain(url);
    expect(strict.stderr).toMatch(/not reachable/);
    expect(strict.logs.some((l) => l.msg === 'listening')).toBe(false);

    // optional: listens (degraded) and serves
    const [line] = await optional.listening(1, 15_000);
    expect(optional.logs.some((l) => l.level === 40 && /not reachable at start/.test(l.msg) && String(l.error).includes(url))).toBe(true);
    const base = `http://127.0.0.1:${line!.port}`;
    const config = { provider: 'openai', custom_host: fake.baseUrl, api_key: 'k', cache: { mode: 'simple', max_age: 60 } };
    const send = (body: unknown): Promise<Answer> =>
      post(`${base}/v1/chat/completions`, { 'x-gateway-api-key': PROCESS_KEY, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config) }, body);
    const body = chatBody(`degraded ${randomUUID()}`);
    const r1 = await send(body);
    const r2 = await send(body);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect([r1.cacheStatus, r2.cacheStatus]).toEqual(['DISABLED', 'DISABLED']);
    expect(fake.requests).toHaveLength(2);

    // Redis comes up on that port: the same process connects by itself and caches again
    late = await startRedisServer({ port });
    await optional.logLine('"redis connected"', (l) => l.msg === 'redis connected', 10_000);
    await optional.logLine('"store available"', (l) => l.msg === 'store available', 5000);
    expect((await send(body)).cacheStatus).toBe('MISS');
    const hit = await send(body);
    expect(hit.cacheStatus).toBe('HIT');
    expect(fake.requests).toHaveLength(3);
    // Two cold starts from the sources and a 5 s bounded wait for Redis: ~12 s alone, more while the
    // rest of the suite loads the machine; every wait inside is bounded on its own.
  }, 40_000);
});

describe('Redis stuck, gone and back while a gateway serves', () => {
  let server: RedisServer;
  let peek: Redis;
  let fake: FakeOpenAI;
  let broken: FakeOpenAI;
  let gw: TestGateway;
  const firstBody = chatBody(`first ${randomUUID()}`);

  beforeAll(async () => {
    [server, fake, broken] = await Promise.all([startRedisServer(), FakeOpenAI.start(), FakeOpenAI.start()]);
    broken.setDefault('/v1/chat/completions', openAIError(500, 'the upstream is down'));
    peek = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    peek.on('error', () => undefined);
    await peek.connect();
    gw = await startGateway({ options: { redis: server.url } });
  });
  afterAll(async () => {
    await gw?.close();
    peek?.disconnect();
    await Promise.all([fake?.close(), broken?.close(), server?.close()]);
  });

  const cacheConfig = () => ({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'k', cache: { mode: 'simple', max_age: 60 } });
  const breakerConfig = () => ({
    provider: 'openai',
    custom_host: broken.baseUrl,
    api_key: 'k',
    cache: { mode: 'simple', max_age: 60 },
    cb_config: { failure_threshold: 2, cooldown_interval: 30_000 },
  });
  const send = (body: unknown, config: unknown = cacheConfig()): Promise<Answer> =>
    post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': JSON.stringify(config) }), body);
  const chatCalls = (): number => fake.requests.filter((r) => r.path === '/v1/chat/completions').length;

  /** `n` requests with distinct bodies, `parallel` at a time. */
  async function burst(label: string, n: number, parallel: number): Promise<Answer[]> {
    const out: Answer[] = [];
    for (let i = 0; i < n; i += parallel) {
      const batch = Array.from({ length: Math.min(parallel, n - i) }, (_, j) => send(chatBody(`${label} ${i + j} ${randomUUID()}`)));
      out.push(...(await Promise.all(batch)));
    }
    return out;
  }

  it('caches through Redis while it is up', async () => {
    expect(gw.gateway.stores.kind).toBe('redis');
    expect((await send(firstBody)).cacheStatus).toBe('MISS');
    expect((await send(firstBody)).cacheStatus).toBe('HIT');
    expect(chatCalls()).toBe(1);
    const m = await scrape(gw.url);
    expect(metricSum(m, 'sluice_store_operation_duration_seconds_count', { store: 'redis-cache', operation: 'get' })).toBeGreaterThanOrEqual(2);
    expect(metricSum(m, 'sluice_store_operation_duration_seconds_count', { store: 'redis-cache', operation: 'set' })).toBeGreaterThanOrEqual(1);
  });

  it('Redis stuck (process stopped): each request goes upstream after the short command timeout, DISABLED; errors counted, logged rate-limited', async () => {
    const before = await scrape(gw.url);
    const complaintsBefore = redisComplaints(gw.logs).length;
    const callsBefore = chatCalls();
    // Our own redis-server: SIGSTOP keeps its sockets open but it answers nothing until SIGCONT.
    const pid = Number(/process_id:(\d+)/.exec(await peek.info('server'))![1]);
    process.kill(pid, 'SIGSTOP');
    let answers: Answer[];
    try {
      answers = await burst('stuck', 30, 10);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.cacheStatus).toBe('DISABLED');
      expect(a.ms).toBeLessThan(1000);
    }
    expect(chatCalls()).toBe(callsBefore + 30);
    // the connection never dropped: the store stayed "available", its commands timed out
    expect(gw.gateway.stores.available()).toBe(true);
    const after = await scrape(gw.url);
    const errors = (s: typeof after) => metricSum(s, 'sluice_store_errors_total', { store: 'redis-cache', operation: 'get' });
    expect(errors(after) - errors(before)).toBe(30);
    const complaints = redisComplaints(gw.logs).slice(complaintsBefore);
    expect(complaints.length).toBeGreaterThanOrEqual(1);
    expect(complaints.length).toBeLessThanOrEqual(3);
    expect(complaints[0]).toMatchObject({ msg: 'redis error', source: 'redis-cache get' });
    // and once Redis answers again, the cache works again
    await peek.ping();
    expect((await send(firstBody)).cacheStatus).toBe('HIT');
  });

  it('Redis gone: requests keep flowing promptly (200, DISABLED), with a few log lines for many requests', async () => {
    const complaintsBefore = redisComplaints(gw.logs).length;
    await server.stop();
    await until('the gateway to see Redis unavailable', () => !gw.gateway.stores.available(), 5000);

    const answers = await burst('gone', 50, 10);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.cacheStatus).toBe('DISABLED');
      expect(a.ms).toBeLessThan(1000);
    }
    // the entry cached before is not reachable either: it goes upstream
    const calls = chatCalls();
    const again = await send(firstBody);
    expect(again.status).toBe(200);
    expect(again.cacheStatus).toBe('DISABLED');
    expect(chatCalls()).toBe(calls + 1);

    const complaints = redisComplaints(gw.logs).slice(complaintsBefore);
    expect(complaints.some((l) => /redis unavailable/.test(l.msg))).toBe(true);
    expect(complaints.length).toBeLessThanOrEqual(3);
    expect(gw.logs.filter((l) => l.level >= 50)).toHaveLength(0);
    const m = await scrape(gw.url);
    const lookups = metricSum(m, 'sluice_cache_lookups_total', { mode: 'simple', result: 'DISABLED' });
    expect(lookups).toBeGreaterThanOrEqual(30 + 50 + 1);
  });

  it('breakers keep working locally while Redis is down', async () => {
    const calls = (): number => broken.requests.filter((r) => r.path === '/v1/chat/completions').length;
    const body = chatBody('breaker while redis is down');
    const r1 = await send(body, breakerConfig());
    const r2 = await send(body, breakerConfig());
    expect([r1.status, r2.status]).toEqual([500, 500]);
    expect(calls()).toBe(2);
    const open = await send(body, breakerConfig());
    expect(open.status).toBe(503);
    expect(open.json.error.code).toBe('circuit_open');
    expect(Number(open.headers['retry-after'])).toBeGreaterThan(0);
    expect(calls()).toBe(2);
  });

  it('Redis back (same port, data lost): the gateway reconnects by itself and the cache works again', async () => {
    await server.restart();
    await until('the gateway to see Redis available', () => gw.gateway.stores.available(), 10_000, 25);
    const back = gw.logs.find((l) => l.msg === 'redis available again');
    expect(back).toBeDefined();
    expect(back!.down_ms).toBeGreaterThan(0);
    expect(gw.logs.some((l) => l.msg === 'store available' && l.store === 'redis')).toBe(true);

    const calls = chatCalls();
    // the data was lost with the restart: a MISS, then a HIT
    const miss = await send(firstBody);
    expect(miss.cacheStatus).toBe('MISS');
    const hit = await send(firstBody);
    expect(hit.cacheStatus).toBe('HIT');
    expect(hit.text).toBe(miss.text);
    expect(chatCalls()).toBe(calls + 1);
    const fresh = new Redis(server.url, { maxRetriesPerRequest: 0, lazyConnect: true });
    await fresh.connect();
    const keys = await fresh.keys('sluice:c:*').finally(() => fresh.disconnect());
    expect(keys.length).toBe(1);
  });
});
