/**
 * Several gateway processes, for real: two `sluice serve` processes sharing one (throw-away)
 * redis-server share cache entries, semantic vectors and circuit state; and `sluice serve --workers 2`
 * runs two workers on one port.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { freePort, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { chatBody, post, until, type Answer } from '../cache-http/_http.js';
import { GatewayProcess, PROCESS_KEY } from './_process.js';

const LONG =
  'Please explain in a few short paragraphs how a circuit breaker protects an application from a failing upstream dependency and when it closes again';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function headers(config: unknown, extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-gateway-api-key': PROCESS_KEY, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config), ...extra };
}

describe('two gateway processes sharing one Redis', () => {
  let redis: RedisServer;
  let peek: Redis;
  let fake: FakeOpenAI;
  let broken: FakeOpenAI;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let urlA: string;
  let urlB: string;

  beforeAll(async () => {
    [redis, fake, broken] = await Promise.all([startRedisServer(), FakeOpenAI.start(), FakeOpenAI.start()]);
    broken.setDefault('/v1/chat/completions', openAIError(500, 'the upstream is down'));
    peek = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await peek.connect();
    a = GatewayProcess.serve(['--port', '0', '--redis', redis.url]);
    b = GatewayProcess.serve(['--port', '0', '--redis', redis.url]);
    const [[la], [lb]] = await Promise.all([a.listening(), b.listening()]);
    urlA = `http://127.0.0.1:${la!.port}`;
    urlB = `http://127.0.0.1:${lb!.port}`;
    expect(la!.pid).toBe(a.pid);
    expect(lb!.pid).toBe(b.pid);
  });

  afterAll(async () => {
    const exits = await Promise.all([a?.stop(), b?.stop()]);
    peek?.disconnect();
    await Promise.all([fake?.close(), broken?.close(), redis?.close()]);
    // both drained and stopped cleanly
    for (const e of exits) if (e) expect(e).toEqual({ code: 0, signal: null });
  });

  const cacheConfig = (mode: 'simple' | 'semantic') => ({
    provider: 'openai',
    custom_host: fake.baseUrl,
    api_key: 'k',
    cache: { mode, max_age: 60, similarity_threshold: 0.9 },
  });
  const chatCalls = (): number => fake.requests.filter((r) => r.path === '/v1/chat/completions').length;
  const send = (base: string, config: unknown, body: unknown, extra: Record<string, string> = {}): Promise<Answer> =>
    post(`${base}/v1/chat/completions`, headers(config, extra), body);

  it('both processes connected to the same Redis', async () => {
    await until('two sluice connections in CLIENT LIST', async () => {
      const list = await peek.client('LIST');
      return (String(list).match(/name=sluice\b/g) ?? []).length >= 2;
    });
    expect(a.logs.some((l) => l.msg === 'redis connected')).toBe(true);
    expect(b.logs.some((l) => l.msg === 'redis connected')).toBe(true);
  });

  it('a cache MISS through A is a HIT through B: the upstream is called once', async () => {
    const body = chatBody(`shared ${randomUUID()}`);
    const first = await send(urlA, cacheConfig('simple'), body);
    expect(first.status).toBe(200);
    expect(first.cacheStatus).toBe('MISS');
    expect(chatCalls()).toBe(1);

    const second = await send(urlB, cacheConfig('simple'), body);
    expect(second.status).toBe(200);
    expect(second.cacheStatus).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(chatCalls()).toBe(1);

    // and back: A finds it too
    expect((await send(urlA, cacheConfig('simple'), body)).cacheStatus).toBe('HIT');
    expect(chatCalls()).toBe(1);
  });

  it("a semantic entry stored through A is found by B (B's vector mirror learns it over pub/sub)", async () => {
    const ns = { 'x-gateway-cache-namespace': `sem-${randomUUID()}` };
    const before = chatCalls();
    const first = await send(urlA, cacheConfig('semantic'), chatBody(LONG), ns);
    expect(first.status).toBe(200);
    expect(first.cacheStatus).toBe('MISS');
    expect(chatCalls()).toBe(before + 1);
    // The vector is in Redis once A's add script ran (it publishes in the same script).
    await until('the vector in Redis', async () => (await peek.keys('sluice:vec:h:*')).length > 0);

    // Same words, other punctuation each time (so a miss here cannot turn the next try into an exact HIT).
    let hit: Answer | undefined;
    const statuses: (string | undefined)[] = [];
    for (let i = 1; i <= 10 && !hit; i++) {
      const r = await send(urlB, cacheConfig('semantic'), chatBody(`${LONG}${'!'.repeat(i)}`), ns);
      expect(r.status).toBe(200);
      statuses.push(r.cacheStatus);
      if (r.cacheStatus === 'SEMANTIC_HIT') hit = r;
      else await new Promise((res) => setTimeout(res, 50));
    }
    expect(hit, `statuses seen through B: ${statuses.join(', ')}`).toBeDefined();
    expect(hit!.text).toBe(first.text);
    // only the misses before the hit (normally none) went upstream
    expect(chatCalls()).toBe(before + statuses.length);
  });

  it('a circuit opened through A is open in B: 503 circuit_open without calling the upstream', async () => {
    const config = {
      provider: 'openai',
      custom_host: broken.baseUrl,
      api_key: 'k',
      cb_config: { failure_threshold: 2, cooldown_interval: 30_000 },
    };
    const calls = (): number => broken.requests.filter((r) => r.path === '/v1/chat/completions').length;
    const body = chatBody('breaker');
    expect((await send(urlA, config, body)).status).toBe(500);
    expect((await send(urlA, config, body)).status).toBe(500);
    expect(calls()).toBe(2);
    const openA = await send(urlA, config, body);
    expect(openA.status).toBe(503);
    expect(openA.json.error.code).toBe('circuit_open');
    expect(calls()).toBe(2);

    // B learns of it from the change A published (it logs the transition it applied)
    const line = await b.logLine('B to apply the remote transition', (l) => l.msg === 'circuit changed on another instance' && l.to === 'open');
    expect(line.from).toBe('closed');
    const openB = await send(urlB, config, body);
    expect(openB.status).toBe(503);
    expect(openB.json.error.code).toBe('circuit_open');
    expect(Number(openB.headers['retry-after'])).toBeGreaterThan(0);
    expect(calls()).toBe(2);
  });
});

describe('sluice serve --workers 2', () => {
  let fake: FakeOpenAI;
  let cluster: GatewayProcess | undefined;
  /** Started at once: its workers wait (bounded) for a Redis that is not there while the other test runs. */
  let failing: GatewayProcess;
  let failingUrl: string;

  beforeAll(async () => {
    failingUrl = `redis://127.0.0.1:${await freePort()}`;
    failing = GatewayProcess.serve(['--port', '0', '--workers', '2', '--redis', failingUrl]);
    fake = await FakeOpenAI.start();
  });
  afterAll(async () => {
    await Promise.all([cluster?.stop(10_000), failing?.stop()]);
    await fake?.close();
  });

  const config = () => ({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'k' });
  function send(base: string, body: unknown): Promise<Answer> {
    return post(`${base}/v1/chat/completions`, headers(config()), body);
  }
  async function serveSome(port: number, label: string, n: number): Promise<void> {
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => send(`http://127.0.0.1:${port}`, chatBody(`${label} ${i}`))));
    expect(answers.map((r) => r.status)).toEqual(Array(n).fill(200));
    answers.forEach((r, i) => expect(r.json.choices[0].message.content).toBe(`echo: ${label} ${i}`));
  }

  it('starts two workers on one port, serves, replaces a worker that dies, and stops with exit 0 on SIGTERM', async () => {
    const port = await freePort();
    cluster = GatewayProcess.serve(['--port', String(port), '--workers', '2']);
    const lines = await cluster.listening(2, 20_000);
    const pids = lines.map((l) => l.pid as number);
    expect(new Set(pids).size).toBe(2);
    expect(pids).not.toContain(cluster.pid);
    expect(lines.every((l) => l.port === port)).toBe(true);
    for (const pid of pids) expect(isAlive(pid)).toBe(true);

    await serveSome(port, 'worker request', 10);
    expect(fake.requests).toHaveLength(10);

    // a worker that dies after it started is replaced
    const victim = pids[0]!;
    process.kill(victim, 'SIGKILL');
    await cluster.logLine('"worker exited; starting another"', (l) => l.msg === 'worker exited; starting another' && l.pid === victim, 5000);
    const third = (await cluster.listening(3, 20_000))[2]!;
    expect(pids).not.toContain(third.pid);
    expect(third.port).toBe(port);
    await serveSome(port, 'after restart', 6);
    const live = [pids[1]!, third.pid as number];

    cluster.child.kill('SIGTERM');
    const exit = await cluster.waitExit(15_000);
    expect(exit).toEqual({ code: 0, signal: null });
    // the workers are gone too
    await until('the workers to exit', () => live.every((pid) => !isAlive(pid)), 5000);
    // (stdout may still be draining after the exit event)
    await cluster.waitFor('"shutting down workers"', () => cluster!.logs.find((l) => l.msg === 'shutting down workers' && l.signal === 'SIGTERM'), 2000, false);
    await cluster.waitFor('both workers\' "stopped" lines', () => (cluster!.logs.filter((l) => l.msg === 'stopped').length === 2 ? true : undefined), 2000, false);
    // Three cold starts from the sources (tsx) plus SIGTERM's 5 s drain delay: ~15 s on a busy 2-core
    // machine, over the suite's default 15 s; every wait inside is bounded on its own.
  }, 40_000);

  it('exits non-zero naming Redis when the workers cannot start (no restart loop)', async () => {
    const exit = await failing.waitExit(20_000);
    expect(exit.code).toBe(2);
    expect(failing.stderr).toContain(`Redis at ${failingUrl} is not reachable`);
    expect(failing.logs.some((l) => l.msg === 'listening')).toBe(false);
    expect(failing.logs.some((l) => l.msg === 'worker exited; starting another')).toBe(false);
  });
});
