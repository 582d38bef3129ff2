/**
 * Usage limits with Redis, seen from the outside: exact admission across two gateway processes
 * sharing one Redis (50 parallel requests against room for 10), fail open or closed when Redis is
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
usage_limits:
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

async function usageMap(base: string, key = KEY_A): Promise<Record<string, number>> {
  const res = await request(`${base}/v1/policies/usage-limits/${POLICY_ID}`, {
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
  let dir: string;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let urlA: string;
  let urlB: string;

  beforeAll(async () => {
    [redis, fake] = await Promise.all([startRedisServer(), FakeOpenAI.start()]);
    fake.setDefault('/v1/chat/completions', chatWithUsage(USAGE));
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
    await Promise.all([fake?.close(), redis?.close()]);
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
