/**
 * The semantic cache through real sockets. With the built-in (lexical) embedder on the memory store
 * and on Redis (a throw-away redis-server), and with an embeddings target declared in the bootstrap
 * whose vectors the test controls.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { embedLocal, promptText } from '../../src/cache/local-embedder.js';
import { FakeOpenAI, openAIError, type RecordedRequest } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { chatBody, metricSum, post, scrape, type Answer } from './_http.js';

const LONG =
  'Please explain in a few short paragraphs how a circuit breaker protects an application from a failing upstream dependency and when it closes again';

function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
const localSimilarity = (a: string, b: string): number =>
  cosine(embedLocal(promptText(chatBody(a))!), embedLocal(promptText(chatBody(b))!));

const backends = [
  { name: 'memory', redis: false },
  { name: 'redis on a spare port', redis: true },
];

describe.each(backends)('semantic cache over HTTP, built-in embedder ($name store)', ({ redis }) => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let server: RedisServer | undefined;
  /** Each test caches in a namespace of its own, so no test's entries can match another's prompts. */
  let ns: Record<string, string>;

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    if (redis) server = await startRedisServer();
    gw = await startGateway({ options: server ? { redis: server.url } : {} });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await server?.close();
  });
  beforeEach(() => {
    fake.reset();
    ns = { 'x-gateway-cache-namespace': `ns-${randomUUID()}` };
  });

  const config = (threshold = 0.9) => ({
    provider: 'openai',
    custom_host: fake.baseUrl,
    api_key: 'k',
    cache: { mode: 'semantic', similarity_threshold: threshold, max_age: 60 },
  });
  function send(body: unknown, threshold = 0.9, headers: Record<string, string> = {}): Promise<Answer> {
    return post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': JSON.stringify(config(threshold)), ...ns, ...headers }), body);
  }
  const upstreamCalls = (): number => fake.requests.filter((r) => r.path === '/v1/chat/completions').length;

  it('an exact repeat is a HIT', async () => {
    const first = await send(chatBody(LONG));
    expect(first.status).toBe(200);
    expect(first.cacheStatus).toBe('MISS');
    const again = await send(chatBody(LONG));
    expect(again.cacheStatus).toBe('HIT');
    expect(again.text).toBe(first.text);
    expect(upstreamCalls()).toBe(1);
  });

  it('the same words with other case and punctuation are a SEMANTIC_HIT served with the stored answer', async () => {
    const first = await send(chatBody('How do I reverse a linked list in Python?'));
    expect(first.cacheStatus).toBe('MISS');
    const reworded = await send(chatBody('how do i reverse a LINKED list, in python'));
    expect(reworded.status).toBe(200);
    expect(reworded.cacheStatus).toBe('SEMANTIC_HIT');
    expect(reworded.text).toBe(first.text);
    expect(reworded.json.choices[0].message.content).toBe('echo: How do I reverse a linked list in Python?');
    expect(upstreamCalls()).toBe(1);
  });

  it('one word added to a long prompt is a SEMANTIC_HIT', async () => {
    const longer = `${LONG} afterwards`;
    expect(localSimilarity(LONG, longer)).toBeGreaterThan(0.9);
    const first = await send(chatBody(LONG));
    expect(first.cacheStatus).toBe('MISS');
    const hit = await send(chatBody(longer));
    expect(hit.cacheStatus).toBe('SEMANTIC_HIT');
    expect(hit.text).toBe(first.text);
    expect(upstreamCalls()).toBe(1);
  });

  it('an unrelated prompt is a MISS', async () => {
    const unrelated = 'What is the best recipe for a chocolate cake with raspberries';
    expect(localSimilarity(LONG, unrelated)).toBeLessThan(0.5);
    expect((await send(chatBody(LONG))).cacheStatus).toBe('MISS');
    const miss = await send(chatBody(unrelated));
    expect(miss.cacheStatus).toBe('MISS');
    expect(miss.json.choices[0].message.content).toBe(`echo: ${unrelated}`);
    expect(upstreamCalls()).toBe(2);
  });

  it('the system prompt is ignored: another system prompt with the same user messages is found', async () => {
    const first = await send(chatBody(LONG, {}, 'You are a terse assistant.'));
    expect(first.cacheStatus).toBe('MISS');
    const other = await send(chatBody(LONG, {}, 'You are a verbose, friendly assistant who loves examples.'));
    expect(['SEMANTIC_HIT', 'HIT']).toContain(other.cacheStatus);
    expect(other.text).toBe(first.text);
    // and with no system prompt at all
    const none = await send(chatBody(LONG));
    expect(['SEMANTIC_HIT', 'HIT']).toContain(none.cacheStatus);
    expect(upstreamCalls()).toBe(1);
  });

  it('another model is another partition: a MISS even for the identical prompt', async () => {
    expect((await send(chatBody(LONG))).cacheStatus).toBe('MISS');
    const otherModel = await send(chatBody(LONG, { model: 'gpt-4o' }));
    expect(otherModel.cacheStatus).toBe('MISS');
    expect(otherModel.json.model).toBe('gpt-4o');
    expect(upstreamCalls()).toBe(2);
    // each model finds its own entry
    expect((await send(chatBody(`${LONG} afterwards`, { model: 'gpt-4o' }))).cacheStatus).toBe('SEMANTIC_HIT');
    expect((await send(chatBody(`${LONG} afterwards`))).cacheStatus).toBe('SEMANTIC_HIT');
    expect(upstreamCalls()).toBe(2);
  });

  it('the namespace partitions semantic entries too', async () => {
    expect((await send(chatBody(LONG))).cacheStatus).toBe('MISS');
    const elsewhere = await send(chatBody(`${LONG} afterwards`), 0.9, { 'x-gateway-cache-namespace': `other-${randomUUID()}` });
    expect(elsewhere.cacheStatus).toBe('MISS');
    expect(upstreamCalls()).toBe(2);
  });

  it('similarity_threshold decides: a prompt at ~0.87 is found at 0.8 and not at 0.9', async () => {
    const near = 'Please explain in a few short paragraphs how a circuit breaker protects a service from a failing upstream dependency and when it opens';
    const sim = localSimilarity(LONG, near);
    expect(sim).toBeGreaterThan(0.8);
    expect(sim).toBeLessThan(0.9);
    const first = await send(chatBody(LONG));
    expect(first.cacheStatus).toBe('MISS');
    const loose = await send(chatBody(near), 0.8);
    expect(loose.cacheStatus).toBe('SEMANTIC_HIT');
    expect(loose.text).toBe(first.text);
    expect(upstreamCalls()).toBe(1);
    const strict = await send(chatBody(near), 0.9);
    expect(strict.cacheStatus).toBe('MISS');
    expect(upstreamCalls()).toBe(2);
  });

  it('counts semantic lookups in sluice_cache_lookups_total', async () => {
    const before = await scrape(gw.url);
    expect((await send(chatBody(LONG))).cacheStatus).toBe('MISS');
    expect((await send(chatBody(LONG))).cacheStatus).toBe('HIT');
    expect((await send(chatBody(`${LONG} afterwards`))).cacheStatus).toBe('SEMANTIC_HIT');
    const after = await scrape(gw.url);
    const delta = (result: string) =>
      metricSum(after, 'sluice_cache_lookups_total', { mode: 'semantic', result }) - metricSum(before, 'sluice_cache_lookups_total', { mode: 'semantic', result });
    expect([delta('MISS'), delta('HIT'), delta('SEMANTIC_HIT')]).toEqual([1, 1, 1]);
    if (redis) {
      const adds = (s: typeof after) => metricSum(s, 'sluice_store_operation_duration_seconds_count', { store: 'redis-vector', operation: 'add' });
      // The store write is made after the answer was sent: an earlier test's add may land in this window.
      expect(adds(after) - adds(before)).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('semantic cache with an embeddings target from the bootstrap', () => {
  let chat: FakeOpenAI;
  let emb: FakeOpenAI;
  let gw: TestGateway;

  // Vectors the test controls: the two France prompts share no words but are made near (cos ≈ 0.97).
  const FRANCE = 'What is the capital of France?';
  const FRANCE_REWORDED = 'Which city is the seat of the French government?';
  const CAKE = 'Best recipe for a chocolate cake?';
  const NEW_TOPIC = 'How tall is Mount Everest?';
  const VECTORS: [string, number[]][] = [
    [FRANCE, [1, 0, 0, 0]],
    [FRANCE_REWORDED, [0.97, 0.24, 0, 0]],
    [CAKE, [0, 0, 1, 0]],
    [NEW_TOPIC, [0, 0, 0, 1]],
  ];
  const embeddingCalls = (): RecordedRequest[] => emb.requests.filter((r) => r.path === '/v1/embeddings');
  const chatCalls = (): number => chat.requests.filter((r) => r.path === '/v1/chat/completions').length;

  beforeAll(async () => {
    chat = await FakeOpenAI.start();
    emb = await FakeOpenAI.start();
    emb.setDefault('/v1/embeddings', (req) => {
      const input = String(req.body?.input ?? '');
      const hit = VECTORS.find(([text]) => input.includes(text));
      if (!hit) return openAIError(400, `no vector scripted for ${JSON.stringify(input)}`);
      return { json: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: hit[1] }], model: req.body.model, usage: { prompt_tokens: 1, total_tokens: 1 } } };
    });
    gw = await startGateway({
      bootstrapYaml: `
virtual_keys:
  emb:
    provider: openai
    api_key: sk-embeddings-provider-key
    custom_host: ${emb.baseUrl}
semantic_cache:
  embeddings:
    virtual_key: emb
    model: text-embedding-3-small
`,
    });
  });
  afterAll(async () => {
    await gw?.close();
    await chat?.close();
    await emb?.close();
  });

  const config = () => ({
    provider: 'openai',
    custom_host: chat.baseUrl,
    api_key: 'k',
    cache: { mode: 'semantic', similarity_threshold: 0.9, max_age: 60 },
  });
  const send = (content: string): Promise<Answer> =>
    post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': JSON.stringify(config()) }), chatBody(content));

  it('embeds prompts through the target: wording the lexical embedder would not match is a SEMANTIC_HIT by its vectors', async () => {
    // the built-in embedder sees nothing in common between these two
    expect(localSimilarity(FRANCE, FRANCE_REWORDED)).toBeLessThan(0.5);

    const first = await send(FRANCE);
    expect(first.status).toBe(200);
    expect(first.cacheStatus).toBe('MISS');
    expect(chatCalls()).toBe(1);
    expect(embeddingCalls()).toHaveLength(1);
    const call = embeddingCalls()[0]!;
    expect(call.body).toMatchObject({ model: 'text-embedding-3-small', encoding_format: 'float' });
    expect(call.body.input).toContain(FRANCE);
    expect(call.headers.authorization).toBe('Bearer sk-embeddings-provider-key');

    const reworded = await send(FRANCE_REWORDED);
    expect(reworded.cacheStatus).toBe('SEMANTIC_HIT');
    expect(reworded.text).toBe(first.text);
    expect(chatCalls()).toBe(1);
    expect(embeddingCalls()).toHaveLength(2);
    expect(embeddingCalls()[1]!.body.input).toContain(FRANCE_REWORDED);

    // an exact repeat is found by its key, without embedding again
    const exact = await send(FRANCE);
    expect(exact.cacheStatus).toBe('HIT');
    expect(embeddingCalls()).toHaveLength(2);

    // an orthogonal vector is a MISS
    const cake = await send(CAKE);
    expect(cake.cacheStatus).toBe('MISS');
    expect(chatCalls()).toBe(2);
    expect(embeddingCalls()).toHaveLength(3);
  });

  it('a failing embeddings target does not fail the request: exact matching only', async () => {
    emb.enqueue('/v1/embeddings', openAIError(500, 'embeddings down'));
    const before = embeddingCalls().length;
    const chatBefore = chatCalls();
    const r = await send(NEW_TOPIC);
    expect(r.status).toBe(200);
    expect(r.cacheStatus).toBe('MISS');
    expect(embeddingCalls().length).toBe(before + 1);
    expect(chatCalls()).toBe(chatBefore + 1);
    // its answer was still stored under its exact key
    const again = await send(NEW_TOPIC);
    expect(again.cacheStatus).toBe('HIT');
    expect(again.text).toBe(r.text);
    expect(chatCalls()).toBe(chatBefore + 1);
  });
});
