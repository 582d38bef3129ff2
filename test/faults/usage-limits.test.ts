/**
 * Usage limits with Redis, seen from the outside: exact admission across two gateway processes
 * sharing one Redis (50 parallel requests against room for 10), admission at the edge of a limit
 * smaller than one estimate (one at a time, and in parallel: within the documented bound), fail open or closed when Redis is
 * unreachable (its port closed), and a settle that could not reach Redis counted once when it is back.
 * Every Redis here is a throw-away redis-server on a spare port.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatCompletion, chatWithUsage, FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { EXCHANGE_TIMEOUT_MS, post, type Answer } from '../helpers/http.js';
import { jsonOrUndefined } from '../helpers/json.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { metricSum, scrape, until } from '../cache-http/_http.js';
import { GatewayProcess } from '../scale/_process.js';
import { declaredId } from '../../src/config/usage-limits.js';

const KEY_A = 'sk-test-limits-redis-a-0123456789';
const KEY_B = 'sk-test-limits-redis-b-0123456789';
const KEY_EDGE = 'sk-test-limits-redis-edge-0123456789';
const EDGE_ID = declaredId({ name: 'Edge tokens', workspace_id: 'ws-edge' });
/** The edge policy's limit, and what each of its answers uses (no max_tokens: each estimate is over 1,024). */
const EDGE_LIMIT = 42;
const EDGE_USAGE = { prompt_tokens: 5, completion_tokens: 15 };
const POLICY = { name: 'Team A tokens', workspace_id: 'ws-a' };
const POLICY_ID = declaredId(POLICY);
/**
 * The fake reports what the gateway estimates for the request below (5 prompt tokens for one short
 * message, 10 output tokens = max_tokens), so admission is exact: 150 tokens are room for 10 requests.
 */
const USAGE = { prompt_tokens: 5, completion_tokens: 10 };
const bootstrap = (limit: number): string => `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b }
  - { key: ${KEY_EDGE}, name: edge, workspace_id: ws-edge }
usage_limits:
  - name: Edge tokens
    type: tokens
    workspace_id: ws-edge
    credit_limit: ${EDGE_LIMIT}
    group_by: [{ key: metadata._user }]
  - name: ${POLICY.name}
    type: tokens
    workspace_id: ws-a
    credit_limit: ${limit}
    periodic_reset: monthly
`;

function send(base: string, upstream: string, key = KEY_A): Promise<Answer> {
  return post(
    `${base}/v1/chat/completions`,
    { 'x-gateway-api-key': key, 'content-type': 'application/json', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': upstream, authorization: 'Bearer k' },
    { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
  );
}

/** A request under the edge policy, for one user (each test its own group), without max_tokens. */
function sendEdge(base: string, upstream: string, user: string, stream = false): Promise<Answer> {
  return post(
    `${base}/v1/chat/completions`,
    {
      'x-gateway-api-key': KEY_EDGE,
      'content-type': 'application/json',
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': upstream,
      authorization: 'Bearer k',
      'x-gateway-metadata': JSON.stringify({ _user: user }),
    },
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream } : {}) },
  );
}

async function usageMap(base: string, key = KEY_A, id = POLICY_ID): Promise<Record<string, number>> {
  const res = await request(`${base}/v1/policies/usage-limits/${id}`, {
    headers: { 'x-gateway-api-key': key },
    headersTimeout: EXCHANGE_TIMEOUT_MS,
    bodyTimeout: EXCHANGE_TIMEOUT_MS,
  });
  const json = jsonOrUndefined(await res.body.text());
  if (res.statusCode !== 200) throw new Error(`GET policy: ${res.statusCode} ${JSON.stringify(json)}`);
  return json.value_key_usage_map;
}

describe('two gateway processes sharing one Redis: admission is exact', () => {
  let redis: RedisServer;
  let fake: FakeOpenAI;
  let edge: FakeOpenAI;
  let dir: string;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let urlA: string;
  let urlB: string;

  beforeAll(async () => {
    [redis, fake, edge] = await Promise.all([startRedisServer(), FakeOpenAI.start(), FakeOpenAI.start()]);
    fake.setDefault('/v1/chat/completions', chatWithUsage(USAGE));
    edge.setDefault('/v1/chat/completions', chatWithUsage(EDGE_USAGE));
    dir = mkdtempSync(join(tmpdir(), 'sluice-limits-'));
    const file = join(dir, 'bootstrap.yaml');
    writeFileSync(file, bootstrap(150));
    a = GatewayProcess.serve(['--port', '0', '--redis', redis.url, '--bootstrap', file]);
    b = GatewayProcess.serve(['--port', '0', '--redis', redis.url, '--bootstrap', file]);
    const [[la], [lb]] = await Promise.all([a.listening(1, 30_000), b.listening(1, 30_000)]);
    urlA = `http://127.0.0.1:${la!.port}`;
    urlB = `http://127.0.0.1:${lb!.port}`;
  }, 40_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([fake?.close(), edge?.close(), redis?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('50 parallel requests against a limit that allows 10, half through each process: exactly 10 are answered, 40 get 412', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => send(i % 2 ? urlA : urlB, fake.baseUrl)));
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 412);
    expect([ok.length, refused.length]).toEqual([10, 40]);
    for (const r of refused) expect(r.json.error.code).toBe('usage_limit_exceeded');
    // the provider saw exactly the admitted ones, and the two processes' refusals add up
    expect(fake.requests).toHaveLength(10);
    const refusals = async (url: string) => metricSum(await scrape(url), 'sluice_usage_limit_rejections_total');
    expect((await refusals(urlA)) + (await refusals(urlB))).toBe(40);
    // settled: exactly the limit used, nothing left reserved (seen from either process)
    await until('the settles', async () => (await usageMap(urlA))[''] === 150);
    expect(await usageMap(urlB)).toEqual({ '': 150 });
    expect((await send(urlA, fake.baseUrl)).status).toBe(412);
  });

  it('at the edge, one at a time through either process: a credit_limit of 42 and 20-token answers give three 200s, then 412 "reached"', async () => {
    // each answer (a stream's [DONE] too) is written once its usage is counted, so the next request,
    // sent at once through the other process, is admitted against that usage, not its reservation
    const answers: Answer[] = [];
    for (let i = 0; i < 4; i++) answers.push(await sendEdge(i % 2 ? urlA : urlB, edge.baseUrl, 'one-at-a-time', i === 1));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 412]);
    const refused = answers[3]!.json;
    expect(refused.error.message).toContain(`is reached: used 60 of ${EDGE_LIMIT} tokens in all`);
    expect(refused.usage_limit).toMatchObject({ policy_id: EDGE_ID, group: 'one-at-a-time', credit_limit: EDGE_LIMIT, used: 60, reserved: 0, reason: 'reached' });
    expect((await usageMap(urlA, KEY_EDGE, EDGE_ID))['one-at-a-time']).toBe(60);
  });

  it('at the edge, while one request is in flight: requests through both processes are refused naming the in-flight reservations', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    edge.enqueue('/v1/chat/completions', () => held.then(() => ({ json: chatCompletion('ok', { usage: EDGE_USAGE }) })));
    const calls = edge.requests.length;
    const pending = sendEdge(urlA, edge.baseUrl, 'in-flight');
    await edge.waitForRequests(calls + 1);
    const refused = await Promise.all(Array.from({ length: 10 }, (_, i) => sendEdge(i % 2 ? urlA : urlB, edge.baseUrl, 'in-flight')));
    expect(refused.map((r) => r.status)).toEqual(Array(10).fill(412));
    expect(edge.requests.length).toBe(calls + 1);
    for (const r of refused) {
      expect(r.json.usage_limit).toMatchObject({ used: 0, reason: 'in_flight' });
      expect(r.json.usage_limit.reserved).toBeGreaterThan(1024); // the held request's estimate
      expect(r.json.error.message).toContain(`in-flight reservations fill the rest (used 0 + reserved ${r.json.usage_limit.reserved} of ${EDGE_LIMIT} tokens in all)`);
    }
    release();
    expect((await pending).status).toBe(200);
    // settled: 20 used, nothing reserved, so the next one is admitted
    await until('the settle', async () => (await usageMap(urlB, KEY_EDGE, EDGE_ID))['in-flight'] === 20);
    expect((await sendEdge(urlB, edge.baseUrl, 'in-flight')).status).toBe(200);
  });

  it('at the edge, 40 parallel requests through both processes: usage stays under credit_limit + one answer, every refusal says which rule', async () => {
    const calls = edge.requests.length;
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => sendEdge(i % 2 ? urlA : urlB, edge.baseUrl, 'parallel')));
    const ok = answers.filter((r) => r.status === 200).length;
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(answers.filter((r) => r.status === 412)).toHaveLength(40 - ok);
    expect(edge.requests.length - calls).toBe(ok);
    for (const r of answers) {
      if (r.status !== 412) continue;
      const u = r.json.usage_limit;
      // reached: usage is at the limit; in flight: below it, and the reservations fill the rest
      if (u.reason === 'reached') expect(u.used).toBeGreaterThanOrEqual(EDGE_LIMIT);
      else {
        expect(u.reason).toBe('in_flight');
        expect(u.used).toBeLessThan(EDGE_LIMIT);
        expect(u.used + u.reserved).toBeGreaterThanOrEqual(EDGE_LIMIT);
        expect(r.json.error.message).toContain('in-flight reservations');
      }
    }
    // the bound: estimates above the usage, so usage passes the limit by less than the last admitted answer
    const used = 20 * ok;
    await until('the settles', async () => (await usageMap(urlA, KEY_EDGE, EDGE_ID))['parallel'] === used);
    expect(used).toBeLessThan(EDGE_LIMIT + 20);
  });
});

describe('Redis unreachable: fail closed (default) or open, and no double count when it is back', () => {
  let redis: RedisServer;
  let fake: FakeOpenAI;
  let closed: TestGateway;
  let open: TestGateway;

  beforeAll(async () => {
    [redis, fake] = await Promise.all([startRedisServer(), FakeOpenAI.start()]);
    fake.setDefault('/v1/chat/completions', chatWithUsage(USAGE));
    [closed, open] = await Promise.all([
      startGateway({ bootstrapYaml: bootstrap(1_000_000), options: { redis: redis.url } }),
      startGateway({ bootstrapYaml: bootstrap(1_000_000), options: { redis: redis.url, 'usage-limits-on-store-error': 'open' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([closed?.close(), open?.close()]);
    await Promise.all([fake?.close(), redis?.close()]);
  });

  it('a settle that could not reach Redis is retried once it is back, and counted once', async () => {
    // the answer is held until Redis is gone: its reservation was made, its settle fails
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    fake.enqueue('/v1/chat/completions', () => held.then(() => ({ json: chatCompletion('ok', { usage: USAGE }) })));
    const pending = send(closed.url, fake.baseUrl);
    await fake.waitForRequests(1);
    await redis.stop({ save: true });
    const settleErrors = async () => metricSum(await scrape(closed.url), 'sluice_store_errors_total', { store: 'redis-usage', operation: 'settle' });
    const before = await settleErrors();
    release();
    expect((await pending).status).toBe(200);
    await until('the failed settle', async () => (await settleErrors()) > before);
    await redis.restart();
    await until('the retried settle', async () => (await usageMap(closed.url).catch((): Record<string, number> => ({})))[''] === 15, 10_000, 100);
    // the reservation was given back too: the whole rest of the limit still fits. (A settle taken twice
    // counts once: the usage-counters contract tests that on both adapters, without waiting here.)
    expect(await usageMap(closed.url)).toEqual({ '': 15 });
    expect((await send(closed.url, fake.baseUrl)).status).toBe(200);
    await until('the second settle', async () => (await usageMap(closed.url))[''] === 30);
  });

  it('closed: requests under a policy get 503 usage_limits_unavailable; others are served. open: admitted, with a warning and a metric', async () => {
    await redis.stop();
    const refused = await send(closed.url, fake.baseUrl);
    expect(refused.status).toBe(503);
    expect(refused.json.error).toMatchObject({ code: 'usage_limits_unavailable', type: 'server_error' });
    // a key no policy applies to is not affected
    expect((await send(closed.url, fake.baseUrl, KEY_B)).status).toBe(200);
    const admitted = await send(open.url, fake.baseUrl);
    expect(admitted.status).toBe(200);
    expect((await send(open.url, fake.baseUrl)).status).toBe(200);
    // one warning line for the interval, however many requests
    const warnings = open.logs.filter((l) => l.level === 40 && /usage counters unreachable/.test(l.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.policies).toEqual([POLICY_ID]);
    expect(metricSum(await scrape(closed.url), 'sluice_usage_limit_store_errors_total', { outcome: 'refused' })).toBe(1);
    expect(metricSum(await scrape(open.url), 'sluice_usage_limit_store_errors_total', { outcome: 'admitted' })).toBe(2);
    expect(metricSum(await scrape(closed.url), 'sluice_store_errors_total', { store: 'redis-usage', operation: 'reserve' })).toBeGreaterThanOrEqual(1);
    // Redis back: enforced again
    await redis.restart();
    await until('the closed gateway to admit again', async () => (await send(closed.url, fake.baseUrl)).status === 200, 10_000, 100);
  });
});
