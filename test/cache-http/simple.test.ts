/**
 * The simple (exact) cache through real sockets: client → gateway → FakeOpenAI. The whole file runs
 * twice: with the embedded memory store, and with Redis on a throw-away redis-server of our own.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chatCompletion, FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { chatBody, chatContent, metricSum, parseSse, post, scrape, type Answer } from './_http.js';

const KEY_A = 'sk-cache-workspace-a-0123456789';
const KEY_B = 'sk-cache-workspace-b-0123456789';
const BOOTSTRAP = `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b }
`;

const backends = [
  { name: 'memory', redis: false },
  { name: 'redis on a spare port', redis: true },
];

describe.each(backends)('simple cache over HTTP ($name store)', ({ redis }) => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let server: RedisServer | undefined;
  let peek: Redis | undefined;

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    if (redis) {
      server = await startRedisServer();
      peek = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await peek.connect();
    }
    gw = await startGateway({ options: server ? { redis: server.url } : {}, bootstrapYaml: BOOTSTRAP });
  });

  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    peek?.disconnect();
    await server?.close();
  });

  beforeEach(() => fake.reset());

  const cacheConfig = (extra: Record<string, unknown> = {}) => ({
    provider: 'openai',
    custom_host: fake.baseUrl,
    api_key: 'k',
    cache: { mode: 'simple', max_age: 60 },
    ...extra,
  });

  function send(body: unknown, headers: Record<string, string> = {}, config: unknown = cacheConfig()): Promise<Answer> {
    return post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': JSON.stringify(config), ...headers }), body);
  }

  const upstreamCalls = (): number => fake.requests.filter((r) => r.path === '/v1/chat/completions').length;
  /** A prompt no other test uses. */
  const fresh = (label: string): string => `${label} ${randomUUID()}`;

  it('uses the store it was configured with', () => {
    expect(gw.gateway.stores.kind).toBe(redis ? 'redis' : 'memory');
    expect(gw.gateway.stores.available()).toBe(true);
  });

  it('a first request is a MISS that reaches the upstream; the identical second is a HIT that does not', async () => {
    const content = fresh('hit');
    const body = chatBody(content);
    const first = await send(body);
    expect(first.status).toBe(200);
    expect(first.cacheStatus).toBe('MISS');
    expect(upstreamCalls()).toBe(1);
    expect(first.json.choices[0].message.content).toBe(`echo: ${content}`);

    const second = await send(body);
    expect(second.status).toBe(200);
    expect(second.cacheStatus).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(second.headers['content-type']).toMatch(/^application\/json/);
    expect(upstreamCalls()).toBe(1);
  });

  it('counts lookups in sluice_cache_lookups_total by mode and result', async () => {
    const before = await scrape(gw.url);
    const body = chatBody(fresh('metrics'));
    expect((await send(body)).cacheStatus).toBe('MISS');
    expect((await send(body)).cacheStatus).toBe('HIT');
    expect((await send(body)).cacheStatus).toBe('HIT');
    const after = await scrape(gw.url);
    const delta = (result: string) =>
      metricSum(after, 'sluice_cache_lookups_total', { mode: 'simple', result }) - metricSum(before, 'sluice_cache_lookups_total', { mode: 'simple', result });
    expect(delta('MISS')).toBe(1);
    expect(delta('HIT')).toBe(2);
    expect(delta('SEMANTIC_HIT')).toBe(0);
    // the store's own operations are timed (Redis only: the memory store is not a remote store)
    const gets = metricSum(after, 'sluice_store_operation_duration_seconds_count', { store: 'redis-cache', operation: 'get' });
    const sets = metricSum(after, 'sluice_store_operation_duration_seconds_count', { store: 'redis-cache', operation: 'set' });
    if (redis) {
      expect(gets - metricSum(before, 'sluice_store_operation_duration_seconds_count', { store: 'redis-cache', operation: 'get' })).toBe(3);
      expect(sets - metricSum(before, 'sluice_store_operation_duration_seconds_count', { store: 'redis-cache', operation: 'set' })).toBe(1);
      expect(after.some((s) => s.name === 'sluice_store_operation_duration_seconds_bucket' && s.labels.store === 'redis-cache')).toBe(true);
      expect(metricSum(after, 'sluice_store_errors_total')).toBe(0);
    } else {
      expect(gets + sets).toBe(0);
    }
  });

  it('the JSON key order of the body does not matter', async () => {
    const content = fresh('order');
    const first = await send(`{"model":"gpt-4o-mini","temperature":0.5,"messages":[{"role":"user","content":${JSON.stringify(content)}}]}`);
    expect(first.cacheStatus).toBe('MISS');
    const second = await send(`{"messages":[{"content":${JSON.stringify(content)},"role":"user"}],"temperature":0.5,"model":"gpt-4o-mini"}`);
    expect(second.cacheStatus).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(upstreamCalls()).toBe(1);
  });

  it('a different body is a MISS', async () => {
    const content = fresh('diff');
    expect((await send(chatBody(content))).cacheStatus).toBe('MISS');
    const other = await send(chatBody(content, { temperature: 0.2 }));
    expect(other.cacheStatus).toBe('MISS');
    const third = await send(chatBody(`${content}!`));
    expect(third.cacheStatus).toBe('MISS');
    expect(upstreamCalls()).toBe(3);
  });

  it('x-gateway-cache-namespace partitions the cache', async () => {
    const body = chatBody(fresh('ns'));
    const a1 = await send(body, { 'x-gateway-cache-namespace': 'tenant-1' });
    expect(a1.cacheStatus).toBe('MISS');
    const a2 = await send(body, { 'x-gateway-cache-namespace': 'tenant-1' });
    expect(a2.cacheStatus).toBe('HIT');
    const b1 = await send(body, { 'x-gateway-cache-namespace': 'tenant-2' });
    expect(b1.cacheStatus).toBe('MISS');
    // no namespace at all is yet another partition
    const none = await send(body);
    expect(none.cacheStatus).toBe('MISS');
    expect(upstreamCalls()).toBe(3);
    expect(b1.text).not.toBe(a1.text);
  });

  it('metadata partitions the cache unless a namespace is given', async () => {
    const body = chatBody(fresh('meta'));
    const m1 = { 'x-gateway-metadata': JSON.stringify({ user: 'u1' }) };
    const m2 = { 'x-gateway-metadata': JSON.stringify({ user: 'u2' }) };
    expect((await send(body, m1)).cacheStatus).toBe('MISS');
    expect((await send(body, m1)).cacheStatus).toBe('HIT');
    expect((await send(body, m2)).cacheStatus).toBe('MISS');
    expect(upstreamCalls()).toBe(2);

    const ns = { 'x-gateway-cache-namespace': 'shared' };
    const n1 = await send(body, { ...ns, ...m1 });
    expect(n1.cacheStatus).toBe('MISS');
    const n2 = await send(body, { ...ns, ...m2 });
    expect(n2.cacheStatus).toBe('HIT');
    expect(n2.text).toBe(n1.text);
    expect(upstreamCalls()).toBe(3);
  });

  it('with a namespace, metadata still partitions a config that routes on metadata', async () => {
    const second = await FakeOpenAI.start();
    try {
      const config = {
        cache: { mode: 'simple', max_age: 60 },
        strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.plan': { $eq: 'paid' } }, then: 'premium' }], default: 'standard' },
        targets: [
          { name: 'premium', provider: 'openai', custom_host: second.baseUrl, api_key: 'k' },
          { name: 'standard', provider: 'openai', custom_host: fake.baseUrl, api_key: 'k' },
        ],
      };
      const body = chatBody(fresh('conditional'));
      const ns = { 'x-gateway-cache-namespace': 'team' };
      const paid = await send(body, { ...ns, 'x-gateway-metadata': JSON.stringify({ plan: 'paid' }) }, config);
      expect(paid.cacheStatus).toBe('MISS');
      expect(paid.headers['x-gateway-target']).toBe('config.targets[0]');
      const free = await send(body, { ...ns, 'x-gateway-metadata': JSON.stringify({ plan: 'free' }) }, config);
      expect(free.cacheStatus).toBe('MISS');
      expect(free.headers['x-gateway-target']).toBe('config.targets[1]');
      expect([second.requests.length, upstreamCalls()]).toEqual([1, 1]);
      const paidAgain = await send(body, { ...ns, 'x-gateway-metadata': JSON.stringify({ plan: 'paid' }) }, config);
      expect(paidAgain.cacheStatus).toBe('HIT');
      expect(paidAgain.text).toBe(paid.text);
      expect(paidAgain.headers['x-gateway-target']).toBe('config.targets[0]');
    } finally {
      await second.close();
    }
  });

  it('force refresh goes upstream (REFRESH) and the refreshed answer is served afterwards', async () => {
    const body = chatBody(fresh('refresh'));
    const first = await send(body);
    expect(first.cacheStatus).toBe('MISS');
    expect((await send(body)).cacheStatus).toBe('HIT');
    expect(upstreamCalls()).toBe(1);

    fake.enqueue('/v1/chat/completions', { json: chatCompletion('the refreshed answer') });
    const refreshed = await send(body, { 'x-gateway-cache-force-refresh': 'true' });
    expect(refreshed.status).toBe(200);
    expect(refreshed.cacheStatus).toBe('REFRESH');
    expect(refreshed.json.choices[0].message.content).toBe('the refreshed answer');
    expect(upstreamCalls()).toBe(2);

    const after = await send(body);
    expect(after.cacheStatus).toBe('HIT');
    expect(after.json.choices[0].message.content).toBe('the refreshed answer');
    expect(after.text).toBe(refreshed.text);
    expect(upstreamCalls()).toBe(2);

    // "false" is no refresh
    expect((await send(body, { 'x-gateway-cache-force-refresh': 'false' })).cacheStatus).toBe('HIT');
    expect(upstreamCalls()).toBe(2);
  });

  it('errors are never cached: the next identical request reaches the upstream', async () => {
    const body = chatBody(fresh('error'));
    fake.enqueue('/v1/chat/completions', openAIError(500, 'upstream broke'));
    const failed = await send(body);
    expect(failed.status).toBe(500);
    expect(upstreamCalls()).toBe(1);

    const retried = await send(body);
    expect(retried.status).toBe(200);
    expect(retried.cacheStatus).toBe('MISS');
    expect(upstreamCalls()).toBe(2);

    const cached = await send(body);
    expect(cached.cacheStatus).toBe('HIT');
    expect(cached.text).toBe(retried.text);
    expect(upstreamCalls()).toBe(2);
  });

  it('a stream is cached as its answer: a stream HIT replays the same SSE ending in [DONE]', async () => {
    const body = chatBody(fresh('stream'), { stream: true });
    const miss = await send(body);
    expect(miss.status).toBe(200);
    expect(miss.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(miss.cacheStatus).toBe('MISS');
    const missFrames = parseSse(miss.text);
    expect(missFrames.at(-1)!.data).toBe('[DONE]');
    expect(chatContent(missFrames)).toBe('Hello');
    expect(upstreamCalls()).toBe(1);

    const hit = await send(body);
    expect(hit.status).toBe(200);
    expect(hit.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(hit.cacheStatus).toBe('HIT');
    const hitFrames = parseSse(hit.text);
    expect(hitFrames.at(-1)!.data).toBe('[DONE]');
    expect(hitFrames.filter((f) => f.data === '[DONE]')).toHaveLength(1);
    expect(chatContent(hitFrames)).toBe('Hello');
    expect(hitFrames.map((f) => f.data)).toEqual(missFrames.map((f) => f.data));
    expect(upstreamCalls()).toBe(1);

    // the same request without stream: JSON with the assembled content
    const { stream: _s, ...jsonBody } = body;
    const asJson = await send(jsonBody);
    expect(asJson.status).toBe(200);
    expect(asJson.headers['content-type']).toMatch(/^application\/json/);
    expect(asJson.cacheStatus).toBe('HIT');
    expect(asJson.json.object).toBe('chat.completion');
    expect(asJson.json.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello' });
    expect(asJson.json.choices[0].finish_reason).toBe('stop');
    expect(asJson.json.id).toBe(JSON.parse(missFrames[0]!.data).id);
    expect(upstreamCalls()).toBe(1);
  });

  it('a cached JSON answer requested as a stream is replayed as SSE', async () => {
    const content = fresh('json-to-stream');
    const miss = await send(chatBody(content));
    expect(miss.cacheStatus).toBe('MISS');
    const hit = await send(chatBody(content, { stream: true }));
    expect(hit.status).toBe(200);
    expect(hit.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(hit.cacheStatus).toBe('HIT');
    const frames = parseSse(hit.text);
    expect(frames.at(-1)!.data).toBe('[DONE]');
    expect(chatContent(frames)).toBe(`echo: ${content}`);
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === miss.json.id)).toBe(true);
    expect(chunks.some((c) => c.choices?.[0]?.finish_reason === 'stop')).toBe(true);
    expect(upstreamCalls()).toBe(1);
  });

  const usageOnly = (a: Answer) => parseSse(a.text).filter((f) => f.data !== '[DONE]' && (JSON.parse(f.data).choices ?? []).length === 0);

  it('a stream MISS shows the usage-only chunk only to a client that asked for it', async () => {
    const asked = await send(chatBody(fresh('usage-miss'), { stream: true, stream_options: { include_usage: true } }));
    expect(asked.cacheStatus).toBe('MISS');
    expect(usageOnly(asked)).toHaveLength(1);
    const notAsked = await send(chatBody(fresh('usage-miss'), { stream: true }));
    expect(notAsked.cacheStatus).toBe('MISS');
    expect(usageOnly(notAsked)).toHaveLength(0);
    expect(chatContent(parseSse(notAsked.text))).toBe('Hello');
  });

  // The cache key ignores stream_options; replay adds or hides the usage-only chunk as this client asked.
  it('a stream HIT shows the usage-only chunk only to a client that asked for it (include_usage)', async () => {
    const content = fresh('usage');
    const asked = await send(chatBody(content, { stream: true, stream_options: { include_usage: true } }));
    expect(asked.cacheStatus).toBe('MISS');
    expect(usageOnly(asked)).toHaveLength(1);
    const notAsked = await send(chatBody(content, { stream: true }));
    expect(notAsked.cacheStatus).toBe('HIT');
    expect(usageOnly(notAsked)).toHaveLength(0);
    const askedAgain = await send(chatBody(content, { stream: true, stream_options: { include_usage: true } }));
    expect(askedAgain.cacheStatus).toBe('HIT');
    expect(usageOnly(askedAgain)).toHaveLength(1);
  });

  it('a request whose config has no cache says DISABLED and always reaches the upstream', async () => {
    const body = chatBody(fresh('disabled'));
    const config = { provider: 'openai', custom_host: fake.baseUrl, api_key: 'k' };
    const a = await send(body, {}, config);
    const b = await send(body, {}, config);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.cacheStatus, b.cacheStatus]).toEqual(['DISABLED', 'DISABLED']);
    expect(upstreamCalls()).toBe(2);
  });

  it('concurrent identical misses share one upstream call', async () => {
    let n = 0;
    fake.setDefault('/v1/chat/completions', () => ({ json: chatCompletion(`slow answer ${++n}`), delayMs: 300 }));
    const body = chatBody(fresh('coalesce'));
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(body)));
    expect(upstreamCalls()).toBe(1);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers[0]!.json.choices[0].message.content).toBe('slow answer 1');
    expect(answers.every((a) => a.cacheStatus === 'MISS')).toBe(true);
    // and the answer was stored once for the next one
    const next = await send(body);
    expect(next.cacheStatus).toBe('HIT');
    expect(next.text).toBe(answers[0]!.text);
    expect(upstreamCalls()).toBe(1);
  });

  it("a key of another workspace does not see the first workspace's entries", async () => {
    const body = chatBody(fresh('workspace'));
    const a1 = await send(body, { 'x-gateway-api-key': KEY_A });
    expect(a1.status).toBe(200);
    expect(a1.cacheStatus).toBe('MISS');
    expect((await send(body, { 'x-gateway-api-key': KEY_A })).cacheStatus).toBe('HIT');
    expect(upstreamCalls()).toBe(1);

    const b1 = await send(body, { 'x-gateway-api-key': KEY_B });
    expect(b1.status).toBe(200);
    expect(b1.cacheStatus).toBe('MISS');
    expect(b1.text).not.toBe(a1.text);
    expect(upstreamCalls()).toBe(2);
    const b2 = await send(body, { 'x-gateway-api-key': KEY_B });
    expect(b2.cacheStatus).toBe('HIT');
    expect(b2.text).toBe(b1.text);
    // and the default key (no workspace) is a third partition
    expect((await send(body)).cacheStatus).toBe('MISS');
    expect(upstreamCalls()).toBe(3);
  });

  it.runIf(redis)('keeps its entries in Redis under the sluice: prefix (deleting them there makes the next request a MISS)', async () => {
    const body = chatBody(fresh('in-redis'));
    expect((await send(body)).cacheStatus).toBe('MISS');
    const keys = await peek!.keys('sluice:c:*');
    expect(keys.length).toBeGreaterThan(0);
    const ttl = await peek!.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect((await send(body)).cacheStatus).toBe('HIT');
    await peek!.del(...keys);
    expect((await send(body)).cacheStatus).toBe('MISS');
    expect(upstreamCalls()).toBe(2);
  });
});
