/**
 * Redis going away and coming back, on a throw-away redis-server of our own (never the shared one).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BreakerPolicy } from '../../src/state/breaker-store.js';
import { RedisBreakerStore } from '../../src/state/redis/breaker-store.js';
import { breakerKeys } from '../../src/state/redis/breaker-scripts.js';
import { RedisCacheStore } from '../../src/state/redis/cache-store.js';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';
import { RateLimitedErrorLog } from '../../src/state/redis/error-log.js';
import { RedisVectorIndex, vectorKeys } from '../../src/state/redis/vector-index.js';
import { freePort, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { nextEvent } from './redis-test-utils.js';
import { vectorFactory } from './vector-fixtures.js';

const policy: BreakerPolicy = { failureThreshold: 3, cooldownMs: 10_000 };

function captureLogger() {
  const lines: { level: string; [k: string]: unknown }[] = [];
  const at = (level: string) => (obj: Record<string, unknown>) => void lines.push({ level, ...obj });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('RateLimitedErrorLog', () => {
  it('logs the first error of an interval with the count suppressed before it', () => {
    let t = 0;
    const lines: Record<string, unknown>[] = [];
    const log = new RateLimitedErrorLog((l) => lines.push(l), 10_000, () => t);
    for (let i = 0; i < 500; i++) log.report('cache get', new Error('down'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'redis error', source: 'cache get', err: 'down', suppressed: 0 });
    t = 9_999;
    log.report('cache get', new Error('down'));
    expect(lines).toHaveLength(1);
    t = 10_000;
    log.report('breaker fail', new Error('still down'));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ source: 'breaker fail', err: 'still down', suppressed: 500 });
    expect(log.count).toBe(502);
  });
});

describe('Redis down at start', () => {
  it('waitUntilReady rejects with a message naming the URL (password redacted); the client connects once Redis is up', async () => {
    const port = await freePort();
    const conn = createRedis(`redis://:s3cret@127.0.0.1:${port}`, { retryDelayMs: () => 50 });
    let server: RedisServer | undefined;
    try {
      const err = await conn.waitUntilReady(300).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(new RegExp(`Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port} is not reachable`));
      expect((err as Error).message).not.toContain('s3cret');
      expect((err as Error).message).toMatch(/ECONNREFUSED/);
      expect(conn.available()).toBe(false);
      // degraded start: when Redis comes up, the same connection becomes ready by itself
      const ready = nextEvent((cb) => conn.onReady(cb), 5000, 'the connection to become ready');
      server = await startRedisServer({ port });
      await ready;
      expect(conn.available()).toBe(true);
    } finally {
      await conn.close();
      await server?.close();
    }
  });
});

describe('Redis going away while serving, and coming back', () => {
  let server: RedisServer;
  let conn: RedisConnection;
  let peer: RedisConnection;
  let t = 1_000_000;
  const log = captureLogger();
  const prefix = 'fault:';
  let cache: RedisCacheStore;
  let index: RedisVectorIndex;
  let breakers: RedisBreakerStore;
  const f = vectorFactory(99);

  beforeAll(async () => {
    server = await startRedisServer();
    conn = createRedis(server.url, { logger: log.logger, now: () => t, errorIntervalMs: 10_000, retryDelayMs: () => 50 });
    peer = createRedis(server.url, { retryDelayMs: () => 50 });
    await Promise.all([conn.waitUntilReady(3000), peer.waitUntilReady(3000)]);
    cache = new RedisCacheStore(conn, { prefix });
    index = new RedisVectorIndex(conn, { prefix });
    breakers = new RedisBreakerStore(conn, { prefix });
    await Promise.all([index.ready(3000), breakers.ready(3000)]);
  });
  afterAll(async () => {
    index?.close();
    breakers?.close();
    await Promise.all([conn?.close(), peer?.close()]);
    await server?.close();
  });

  it('while up: the stores work', async () => {
    await cache.set('k', 'v', 60);
    expect(await cache.get('k')).toBe('v');
    expect(conn.available()).toBe(true);
  });

  it('state written behind the stores\' backs (no message) is not yet in their mirrors', async () => {
    // a vector and an open circuit, straight into Redis, saved so that the restarted server has them
    const kv = vectorKeys(prefix);
    const v = Float32Array.from(f.random(16));
    const unit = v.map((x) => x / Math.hypot(...v));
    await peer.client.hset(kv.vectors('p'), 'hidden', Buffer.from(unit.buffer));
    await peer.client.zadd(kv.expiry('p'), Date.now() + 600_000, 'hidden');
    await peer.client.sadd(kv.partitions, 'p');
    const kb = breakerKeys(prefix);
    await peer.client.incr(kb.seq);
    await peer.client.hset(kb.state('hidden'), { status: 'open', failures: 3, openedAt: 5000, probeOwner: '', probeUntil: 0 });
    await peer.client.sadd(kb.ids, 'hidden');
    hiddenVector = unit;
    expect(await index.search('p', unit, 0.99)).toBeUndefined();
    expect(breakers.status('hidden')).toBe('closed');

    // and a circuit whose probe this instance holds when Redis goes away
    for (let i = 0; i < 3; i++) breakers.onFailure('ghost', 1000, policy);
    expect((await breakers.admit('ghost', 11_000, policy)).admission).toEqual({ kind: 'probe' });
    await breakers.flush();
    expect(await peer.client.hget(kb.state('ghost'), 'probeOwner')).toBe(breakers.origin);
  });
  let hiddenVector: Float32Array;

  it('when Redis stops: available() turns false, with one warning line', async () => {
    const down = nextEvent((cb) => conn.onDown(cb), 5000, 'the connection to go down');
    await server.stop({ save: true });
    await down;
    expect(conn.available()).toBe(false);
    expect(log.lines.filter((l) => String(l.msg).startsWith('redis unavailable'))).toHaveLength(1);
  });

  it('while down: cache calls reject at once (no waiting on a dead Redis)', async () => {
    for (let i = 0; i < 20; i++) {
      const start = performance.now();
      await expect(cache.get('k')).rejects.toThrow();
      await expect(cache.set('k', 'v', 60)).rejects.toThrow();
      expect(performance.now() - start).toBeLessThan(100);
    }
  });

  it('while down: many failures write one error line per interval, with the count suppressed', async () => {
    const errorLines = () => log.lines.filter((l) => l.msg === 'redis error');
    const before = errorLines().length; // the first error of this interval was already logged
    expect(before).toBe(1);
    for (let i = 0; i < 200; i++) await cache.get('k').catch(() => {});
    expect(errorLines()).toHaveLength(1);
    const seen = conn.errors.count; // cache failures (40 + 200) and reconnect errors, all in this interval
    expect(seen).toBeGreaterThanOrEqual(240);
    t += 10_000; // next interval
    await cache.get('k').catch(() => {});
    expect(errorLines()).toHaveLength(2);
    // every error but the one logged first was suppressed, and is counted in the next line
    expect(errorLines()[1]!.suppressed).toBeGreaterThanOrEqual(seen - 1);
    expect(errorLines()[1]!.level).toBe('warn');
  });

  it('while down: the breaker is a local memory store (sync answers, local probe)', async () => {
    expect(breakers.onFailure('local', 1000, policy)).toBeUndefined();
    breakers.onFailure('local', 1001, policy);
    expect(breakers.onFailure('local', 1002, policy)).toEqual({ from: 'closed', to: 'open' });
    expect(breakers.peek('local', 2002, policy)).toEqual({ kind: 'open', retryAfterMs: 9000 });
    const r = breakers.admit('local', 11_002, policy);
    expect(r).toEqual({ admission: { kind: 'probe' }, transition: { from: 'open', to: 'half-open' } });
    expect(breakers.admit('local', 11_003, policy)).toEqual({ admission: { kind: 'open', retryAfterMs: 1000 } });
    expect(breakers.onSuccess('local')).toEqual({ from: 'half-open', to: 'closed' });
  });

  it('while down: a probe held in Redis settles locally', async () => {
    expect(breakers.onSuccess('ghost')).toEqual({ from: 'half-open', to: 'closed' });
  });

  it('while down: vector search answers from the mirror; add rejects', async () => {
    await expect(index.add('p', 'x', f.random(16), 60)).rejects.toThrow();
    expect(await index.search('p', f.random(16), 0.99)).toBeUndefined();
  });

  it('when Redis returns: available() again, a recovery line, and the mirrors resync', async () => {
    const ready = nextEvent((cb) => conn.onReady(cb), 5000, 'the connection to be ready again');
    const indexSynced = index.nextSync(5000);
    const breakersSynced = breakers.nextSync(5000);
    await server.restart();
    await ready;
    expect(conn.available()).toBe(true);
    const back = log.lines.find((l) => l.msg === 'redis available again');
    expect(back).toBeDefined();
    expect(back!.errors_suppressed).toEqual(expect.any(Number));
    await Promise.all([indexSynced, breakersSynced]);
    // loaded from Redis: what was written behind their backs
    expect((await index.search('p', hiddenVector, 0.99))?.id).toBe('hidden');
    expect(breakers.status('hidden')).toBe('open');
    expect(breakers.peek('hidden', 6000, policy)).toEqual({ kind: 'open', retryAfterMs: 9000 });
    // the shared state wins: "ghost" is half-open again, with a lease in our name that no probe here
    // holds any more. It is given back, so the circuit is not stuck: the next request may probe.
    expect(breakers.status('ghost')).toBe('half-open');
    await breakers.flush();
    // the peer connection lost Redis too and reconnects on its own schedule: wait for it, not a sleep
    await peer.waitUntilReady(5000);
    expect(await peer.client.exists(breakerKeys(prefix).probe('ghost'))).toBe(0);
    expect(await breakers.admit('ghost', 11_500, policy)).toEqual({ admission: { kind: 'probe' } });
    // and the cache works again
    await cache.set('k2', 'v2', 60);
    expect(await cache.get('k2')).toBe('v2');
  });
});
