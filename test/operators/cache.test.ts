import { defer, from, Observable, of, Subject, throwError, type Subscription } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { embedLocal } from '../../src/cache/local-embedder.js';
import { parseEntry, type CacheEntry } from '../../src/cache/entry.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { withCache, type CacheOptions, type CacheStatus } from '../../src/operators/cache.js';
import type { AnswerMeta, GatewayEvent } from '../../src/upstream/events.js';
import type { CacheStore } from '../../src/state/cache-store.js';
import type { VectorIndex, VectorMatch } from '../../src/state/vector-index.js';

// ---- test doubles of our own ports -------------------------------------------------------------

class MapStore implements CacheStore {
  readonly kind = 'memory' as const;
  readonly data = new Map<string, string>();
  readonly gets: string[] = [];
  readonly sets: { key: string; value: string; ttl: number }[] = [];
  failGet = false;
  failSet = false;
  async get(key: string): Promise<string | undefined> {
    this.gets.push(key);
    if (this.failGet) throw new Error('store down');
    return this.data.get(key);
  }
  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.sets.push({ key, value, ttl: ttlSeconds });
    if (this.failSet) throw new Error('store down');
    this.data.set(key, value);
  }
  async delete(key: string): Promise<void> {
    this.data.delete(key);
  }
  entry(key: string): CacheEntry | undefined {
    const t = this.data.get(key);
    return t === undefined ? undefined : parseEntry(t);
  }
}

/** An in-process store: answers the exact key synchronously too, counting those reads. */
class SyncMapStore extends MapStore {
  readonly syncGets: string[] = [];
  getSync(key: string): string | undefined {
    this.syncGets.push(key);
    return this.data.get(key);
  }
}

class BruteForceVectors implements VectorIndex {
  readonly kind = 'memory' as const;
  readonly parts = new Map<string, Map<string, Float32Array>>();
  searches = 0;
  async add(partition: string, id: string, vector: Float32Array): Promise<void> {
    let p = this.parts.get(partition);
    if (!p) this.parts.set(partition, (p = new Map()));
    p.set(id, vector);
  }
  async search(partition: string, vector: Float32Array, threshold: number): Promise<VectorMatch | undefined> {
    this.searches++;
    let best: VectorMatch | undefined;
    for (const [id, v] of this.parts.get(partition) ?? []) {
      let dot = 0;
      let na = 0;
      let nb = 0;
      for (let i = 0; i < v.length; i++) {
        dot += v[i]! * vector[i]!;
        na += v[i]! * v[i]!;
        nb += vector[i]! * vector[i]!;
      }
      const score = na && nb ? dot / Math.sqrt(na * nb) : 0;
      if (score >= threshold && (!best || score > best.score)) best = { id, score };
    }
    return best;
  }
  size(): number {
    let n = 0;
    for (const p of this.parts.values()) n += p.size;
    return n;
  }
}

// ---- helpers -----------------------------------------------------------------------------------

const meta: AnswerMeta = { provider: 'openai', target: 'config.targets[0]', retries: 1 };
const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };

const chatBody = (content: string) => ({
  id: `chatcmpl-${content.length}`,
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
  usage,
});
const jsonAnswer = (content: string): GatewayEvent => {
  const body = chatBody(content);
  return { type: 'json', status: 200, body, raw: JSON.stringify(body), meta, usage };
};
const chunkData = (content: string, finish: string | null = null) =>
  JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 2, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: finish }] });

/** A run factory counting its calls. */
function runner(make: () => Observable<GatewayEvent>) {
  const run = vi.fn(make);
  return run;
}

interface Env {
  store: MapStore;
  vectors: BruteForceVectors;
  inflight: Map<string, Observable<GatewayEvent>>;
  lookups: [string, CacheStatus][];
  embed: ReturnType<typeof vi.fn<(t: string) => Promise<Float32Array>>>;
}

function env(): Env {
  return {
    store: new MapStore(),
    vectors: new BruteForceVectors(),
    inflight: new Map(),
    lookups: [],
    embed: vi.fn(async (t: string) => embedLocal(t)),
  };
}

function options(e: Env, o: Partial<CacheOptions> = {}): CacheOptions {
  return {
    mode: 'simple',
    ttlSeconds: 60,
    threshold: 0.85,
    key: 'c:k1',
    endpoint: 'chat',
    stream: false,
    forceRefresh: false,
    store: e.store,
    vectors: e.vectors,
    embed: e.embed,
    available: () => true,
    inflight: e.inflight,
    onLookup: (mode, status) => e.lookups.push([mode, status]),
    ...o,
  };
}

function collect(obs: Observable<GatewayEvent>): Promise<{ events: GatewayEvent[]; error?: unknown }> {
  return new Promise((resolve) => {
    const events: GatewayEvent[] = [];
    obs.subscribe({ next: (ev) => events.push(ev), error: (error) => resolve({ events, error }), complete: () => resolve({ events }) });
  });
}

/** Let pending promise callbacks (the store's fire-and-forget writes) run. Not a timer: one macrotask turn. */
const settle = () => new Promise<void>((r) => setImmediate(r));

const statusOf = (ev: GatewayEvent | undefined) => (ev && ev.type !== 'chunk' ? ev.meta.cacheStatus : undefined);
const rawOf = (ev: GatewayEvent | undefined) => (ev?.type === 'json' ? (ev.raw ?? JSON.stringify(ev.body)) : undefined);

// ---- simple mode -------------------------------------------------------------------------------

describe('withCache: simple mode', () => {
  it('an in-process store is read once per lookup: a getSync miss is not asked again, a hit is answered from it', async () => {
    const e = env();
    const store = new SyncMapStore();
    const run = runner(() => of(jsonAnswer('Paris')));

    const first = await collect(defer(run).pipe(withCache(options(e, { store }))));
    expect(statusOf(first.events[0])).toBe('MISS');
    expect(store.syncGets).toEqual(['c:k1']);
    expect(store.gets).toEqual([]);
    await settle();

    const second = await collect(defer(run).pipe(withCache(options(e, { store }))));
    expect(statusOf(second.events[0])).toBe('HIT');
    expect(run).toHaveBeenCalledTimes(1);
    expect(store.syncGets).toEqual(['c:k1', 'c:k1']);
    expect(store.gets).toEqual([]);
  });

  it('MISS calls run once and stores the answer; then HIT replays it without calling run', async () => {
    const e = env();
    const run = runner(() => of(jsonAnswer('Paris')));

    const first = await collect(defer(run).pipe(withCache(options(e))));
    expect(first.error).toBeUndefined();
    expect(run).toHaveBeenCalledTimes(1);
    expect(first.events).toHaveLength(1);
    expect(statusOf(first.events[0])).toBe('MISS');
    expect(rawOf(first.events[0])).toBe(JSON.stringify(chatBody('Paris')));
    await settle();
    expect(e.store.sets).toEqual([{ key: 'c:k1', value: expect.any(String), ttl: 60 }]);
    expect(e.store.entry('c:k1')).toEqual({
      v: 1,
      kind: 'json',
      status: 200,
      provider: 'openai',
      target: 'config.targets[0]',
      body: JSON.stringify(chatBody('Paris')),
      usage,
    });

    const second = await collect(defer(run).pipe(withCache(options(e))));
    expect(run).toHaveBeenCalledTimes(1);
    expect(second.events).toHaveLength(1);
    const hit = second.events[0]!;
    expect(hit.type).toBe('json');
    expect(rawOf(hit)).toBe(JSON.stringify(chatBody('Paris')));
    expect(statusOf(hit)).toBe('HIT');
    if (hit.type === 'json') expect(hit.meta).toMatchObject({ provider: 'openai', target: 'config.targets[0]', retries: 0 });
    expect(e.store.sets).toHaveLength(1);
    expect(e.lookups).toEqual([
      ['simple', 'MISS'],
      ['simple', 'HIT'],
    ]);
  });

  it('another key is another entry', async () => {
    const e = env();
    let n = 0;
    const run = runner(() => of(jsonAnswer(`answer ${++n}`)));
    await collect(defer(run).pipe(withCache(options(e, { key: 'c:a' }))));
    const b = await collect(defer(run).pipe(withCache(options(e, { key: 'c:b' }))));
    expect(run).toHaveBeenCalledTimes(2);
    expect(statusOf(b.events[0])).toBe('MISS');
    expect(rawOf(b.events[0])).toContain('answer 2');
  });

  it('does not call run or the store before subscription', () => {
    const e = env();
    const run = runner(() => of(jsonAnswer('x')));
    defer(run).pipe(withCache(options(e)));
    expect(run).not.toHaveBeenCalled();
    expect(e.store.gets).toEqual([]);
  });

  it('an errored run fails the request and stores nothing', async () => {
    const e = env();
    const err = new GatewayError('upstream_error', 'upstream 500', { status: 500 });
    const run = runner(() => throwError(() => err));
    const r = await collect(defer(run).pipe(withCache(options(e))));
    expect(r.error).toBe(err);
    await settle();
    expect(e.store.sets).toEqual([]);
    expect(e.store.data.size).toBe(0);
    // and the next identical request goes upstream again
    const again = await collect(defer(run).pipe(withCache(options(e))));
    expect(again.error).toBe(err);
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('a non-2xx JSON answer is passed on and not stored', async () => {
    const e = env();
    const run = runner(() => of<GatewayEvent>({ type: 'json', status: 429, body: { error: { message: 'slow down' } }, meta }));
    const r = await collect(defer(run).pipe(withCache(options(e))));
    expect(r.events).toHaveLength(1);
    expect(statusOf(r.events[0])).toBe('MISS');
    await settle();
    expect(e.store.sets).toEqual([]);
  });

  it('a stream that errors mid-way is passed on (chunks, then the error) and not stored', async () => {
    const e = env();
    const err = new GatewayError('stream_interrupted');
    const run = runner(
      () =>
        new Observable<GatewayEvent>((sub) => {
          sub.next({ type: 'stream-start', meta });
          sub.next({ type: 'chunk', data: chunkData('Hel') });
          sub.error(err);
        }),
    );
    const r = await collect(defer(run).pipe(withCache(options(e, { stream: true }))));
    expect(r.events.map((ev) => ev.type)).toEqual(['stream-start', 'chunk']);
    expect(r.error).toBe(err);
    await settle();
    expect(e.store.sets).toEqual([]);
  });

  it('a stream is stored as its chunks; a stream HIT replays them; a JSON request for it gets the assembled answer', async () => {
    const e = env();
    const chunks = [chunkData('Hel'), chunkData('lo', 'stop')];
    const run = runner(() =>
      from<GatewayEvent[]>([{ type: 'stream-start', meta }, { type: 'chunk', data: chunks[0]! }, { type: 'chunk', data: chunks[1]! }]),
    );
    const miss = await collect(defer(run).pipe(withCache(options(e, { stream: true }))));
    expect(miss.events.map((ev) => ev.type)).toEqual(['stream-start', 'chunk', 'chunk']);
    expect(statusOf(miss.events[0])).toBe('MISS');
    // chunks are passed through untouched (no meta added)
    expect(miss.events[1]).toEqual({ type: 'chunk', data: chunks[0] });
    await settle();
    expect(e.store.entry('c:k1')).toMatchObject({ kind: 'stream', chunks, provider: 'openai', target: 'config.targets[0]' });

    const hit = await collect(defer(run).pipe(withCache(options(e, { stream: true }))));
    expect(run).toHaveBeenCalledTimes(1);
    expect(hit.events).toEqual([
      { type: 'stream-start', meta: { provider: 'openai', target: 'config.targets[0]', retries: 0, cacheStatus: 'HIT' } },
      { type: 'chunk', data: chunks[0] },
      { type: 'chunk', data: chunks[1] },
    ]);

    const asJson = await collect(defer(run).pipe(withCache(options(e, { stream: false }))));
    expect(run).toHaveBeenCalledTimes(1);
    expect(asJson.events).toHaveLength(1);
    const ev = asJson.events[0]!;
    if (ev.type !== 'json') throw new Error('expected json');
    expect(ev.meta.cacheStatus).toBe('HIT');
    expect(ev.status).toBe(200);
    expect((ev.body as any).choices[0].message).toEqual({ role: 'assistant', content: 'Hello' });
    expect(JSON.parse(ev.raw!)).toEqual(ev.body);
  });

  it('a JSON answer is replayed as SSE to a stream request', async () => {
    const e = env();
    const run = runner(() => of(jsonAnswer('Paris')));
    await collect(defer(run).pipe(withCache(options(e))));
    await settle();
    const hit = await collect(defer(run).pipe(withCache(options(e, { stream: true }))));
    expect(run).toHaveBeenCalledTimes(1);
    expect(hit.events[0]).toMatchObject({ type: 'stream-start', meta: { cacheStatus: 'HIT' } });
    const text = hit.events
      .slice(1)
      .map((ev) => JSON.parse((ev as { data: string }).data))
      .flatMap((c) => c.choices.map((ch: any) => ch.delta?.content ?? ''))
      .join('');
    expect(text).toBe('Paris');
  });

  it('REFRESH skips the read, calls run and overwrites the stored answer', async () => {
    const e = env();
    const run1 = runner(() => of(jsonAnswer('old')));
    await collect(defer(run1).pipe(withCache(options(e))));
    await settle();
    const getsBefore = e.store.gets.length;

    const run2 = runner(() => of(jsonAnswer('new answer')));
    const r = await collect(defer(run2).pipe(withCache(options(e, { forceRefresh: true }))));
    expect(run2).toHaveBeenCalledTimes(1);
    expect(e.store.gets.length).toBe(getsBefore);
    expect(statusOf(r.events[0])).toBe('REFRESH');
    expect(rawOf(r.events[0])).toBe(JSON.stringify(chatBody('new answer')));
    await settle();
    expect(e.store.entry('c:k1')?.body).toBe(JSON.stringify(chatBody('new answer')));

    const hit = await collect(defer(run1).pipe(withCache(options(e))));
    expect(run1).toHaveBeenCalledTimes(1);
    expect(rawOf(hit.events[0])).toBe(JSON.stringify(chatBody('new answer')));
    expect(e.lookups.map(([, s]) => s)).toEqual(['MISS', 'REFRESH', 'HIT']);
  });

  it('REFRESH with an errored run keeps the old answer', async () => {
    const e = env();
    await collect(of(jsonAnswer('old')).pipe(withCache(options(e))));
    await settle();
    const r = await collect(throwError(() => new GatewayError('upstream_error', 'x', { status: 500 })).pipe(withCache(options(e, { forceRefresh: true }))));
    expect(r.error).toBeInstanceOf(GatewayError);
    await settle();
    expect(e.store.entry('c:k1')?.body).toBe(JSON.stringify(chatBody('old')));
  });

  it('DISABLED when the store is unavailable: run is called, the store is not touched', async () => {
    const e = env();
    const run = runner(() => of(jsonAnswer('Paris')));
    const r = await collect(defer(run).pipe(withCache(options(e, { available: () => false }))));
    expect(run).toHaveBeenCalledTimes(1);
    expect(statusOf(r.events[0])).toBe('DISABLED');
    await settle();
    expect(e.store.gets).toEqual([]);
    expect(e.store.sets).toEqual([]);
    expect(e.lookups).toEqual([['simple', 'DISABLED']]);
  });

  it('DISABLED when store.get rejects: the request still succeeds from upstream', async () => {
    const e = env();
    e.store.failGet = true;
    const run = runner(() => of(jsonAnswer('Paris')));
    const r = await collect(defer(run).pipe(withCache(options(e))));
    expect(r.error).toBeUndefined();
    expect(run).toHaveBeenCalledTimes(1);
    expect(statusOf(r.events[0])).toBe('DISABLED');
    expect(rawOf(r.events[0])).toBe(JSON.stringify(chatBody('Paris')));
    expect(e.lookups).toEqual([['simple', 'DISABLED']]);
  });

  it('a store.set that rejects does not fail the request', async () => {
    const e = env();
    e.store.failSet = true;
    const run = runner(() => of(jsonAnswer('Paris')));
    const r = await collect(defer(run).pipe(withCache(options(e))));
    expect(r.error).toBeUndefined();
    expect(statusOf(r.events[0])).toBe('MISS');
    await settle();
    expect(e.store.sets).toHaveLength(1);
    expect(e.store.data.size).toBe(0);
  });

  it('an unreadable stored value is a MISS, and is overwritten', async () => {
    const e = env();
    e.store.data.set('c:k1', 'not json');
    const run = runner(() => of(jsonAnswer('Paris')));
    const r = await collect(defer(run).pipe(withCache(options(e))));
    expect(statusOf(r.events[0])).toBe('MISS');
    expect(run).toHaveBeenCalledTimes(1);
    await settle();
    expect(e.store.entry('c:k1')?.body).toBe(JSON.stringify(chatBody('Paris')));
  });

  it('tags meta.cacheStatus on json and stream-start without changing the rest of meta', async () => {
    const e = env();
    const r = await collect(of(jsonAnswer('x')).pipe(withCache(options(e))));
    const ev = r.events[0]!;
    if (ev.type !== 'json') throw new Error('expected json');
    expect(ev.meta).toEqual({ ...meta, cacheStatus: 'MISS' });
    expect(meta.cacheStatus).toBeUndefined(); // the upstream's event is not mutated
  });
});

// ---- semantic mode -----------------------------------------------------------------------------

describe('withCache: semantic mode', () => {
  const PY = 'user: How do I reverse a linked list in Python?';
  const JAVA = 'user: How do I reverse a linked list in Java?';
  const BREAD = 'user: Recommend a good recipe for banana bread';
  const sem = (e: Env, key: string, text: string, o: Partial<CacheOptions> = {}) =>
    options(e, { mode: 'semantic', key, text, partition: 'p:gpt-4o-mini', ...o });

  it('stores the vector on a MISS; an exact hit comes first (no embed call); a similar prompt is a SEMANTIC_HIT; a dissimilar one a MISS', async () => {
    const e = env();
    const run = runner(() => of(jsonAnswer('Use a loop with three pointers.')));

    const miss = await collect(defer(run).pipe(withCache(sem(e, 'c:py', PY))));
    expect(statusOf(miss.events[0])).toBe('MISS');
    expect(e.embed).toHaveBeenCalledTimes(1);
    expect(e.embed).toHaveBeenCalledWith(PY);
    await settle();
    expect(e.vectors.size()).toBe(1);
    expect([...e.vectors.parts.get('p:gpt-4o-mini')!.keys()]).toEqual(['c:py']);

    const searches = e.vectors.searches;
    const exact = await collect(defer(run).pipe(withCache(sem(e, 'c:py', PY))));
    expect(statusOf(exact.events[0])).toBe('HIT');
    expect(e.embed).toHaveBeenCalledTimes(1);
    expect(e.vectors.searches).toBe(searches);

    const similar = await collect(defer(run).pipe(withCache(sem(e, 'c:java', JAVA))));
    expect(statusOf(similar.events[0])).toBe('SEMANTIC_HIT');
    expect(rawOf(similar.events[0])).toBe(JSON.stringify(chatBody('Use a loop with three pointers.')));
    expect(run).toHaveBeenCalledTimes(1);

    const run2 = runner(() => of(jsonAnswer('Mash bananas.')));
    const other = await collect(defer(run2).pipe(withCache(sem(e, 'c:bread', BREAD))));
    expect(statusOf(other.events[0])).toBe('MISS');
    expect(run2).toHaveBeenCalledTimes(1);
    expect(e.lookups.map(([m, s]) => `${m}:${s}`)).toEqual(['semantic:MISS', 'semantic:HIT', 'semantic:SEMANTIC_HIT', 'semantic:MISS']);
  });

  it('a SEMANTIC_HIT does not store a copy under its own key', async () => {
    const e = env();
    await collect(of(jsonAnswer('a')).pipe(withCache(sem(e, 'c:py', PY))));
    await settle();
    const setsBefore = e.store.sets.length;
    await collect(of(jsonAnswer('b')).pipe(withCache(sem(e, 'c:java', JAVA))));
    await settle();
    expect(e.store.sets.length).toBe(setsBefore);
  });

  it('matches only within the partition', async () => {
    const e = env();
    await collect(of(jsonAnswer('a')).pipe(withCache(sem(e, 'c:py', PY, { partition: 'p:one' }))));
    await settle();
    const run = runner(() => of(jsonAnswer('b')));
    const r = await collect(defer(run).pipe(withCache(sem(e, 'c:py2', PY, { partition: 'p:two' }))));
    expect(statusOf(r.events[0])).toBe('MISS');
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('respects the threshold', async () => {
    const e = env();
    await collect(of(jsonAnswer('a')).pipe(withCache(sem(e, 'c:py', PY))));
    await settle();
    const run = runner(() => of(jsonAnswer('b')));
    const r = await collect(defer(run).pipe(withCache(sem(e, 'c:java', JAVA, { threshold: 0.99 }))));
    expect(statusOf(r.events[0])).toBe('MISS');
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('a matched vector whose entry has expired from the store is a MISS', async () => {
    const e = env();
    await collect(of(jsonAnswer('a')).pipe(withCache(sem(e, 'c:py', PY))));
    await settle();
    e.store.data.delete('c:py');
    const run = runner(() => of(jsonAnswer('b')));
    const r = await collect(defer(run).pipe(withCache(sem(e, 'c:java', JAVA))));
    expect(statusOf(r.events[0])).toBe('MISS');
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('an embed function that fails gives a plain MISS (not an error), stored without a vector', async () => {
    const e = env();
    e.embed.mockImplementation(async () => {
      throw new GatewayError('upstream_invalid_response', 'no embedding');
    });
    const run = runner(() => of(jsonAnswer('a')));
    const r = await collect(defer(run).pipe(withCache(sem(e, 'c:py', PY))));
    expect(r.error).toBeUndefined();
    expect(statusOf(r.events[0])).toBe('MISS');
    expect(run).toHaveBeenCalledTimes(1);
    await settle();
    expect(e.store.entry('c:py')).toBeDefined();
    expect(e.vectors.size()).toBe(0);
    expect(e.lookups).toEqual([['semantic', 'MISS']]);
  });

  it('without a prompt text it behaves as simple mode (no embed call)', async () => {
    const e = env();
    const run = runner(() => of(jsonAnswer('a')));
    await collect(defer(run).pipe(withCache(options(e, { mode: 'semantic', key: 'c:x' }))));
    await settle();
    expect(e.embed).not.toHaveBeenCalled();
    expect(e.vectors.size()).toBe(0);
    const hit = await collect(defer(run).pipe(withCache(options(e, { mode: 'semantic', key: 'c:x' }))));
    expect(statusOf(hit.events[0])).toBe('HIT');
  });

  it('REFRESH in semantic mode stores the vector too', async () => {
    const e = env();
    await collect(of(jsonAnswer('fresh')).pipe(withCache(sem(e, 'c:py', PY, { forceRefresh: true }))));
    await settle();
    expect(e.vectors.size()).toBe(1);
    const r = await collect(of(jsonAnswer('other')).pipe(withCache(sem(e, 'c:java', JAVA))));
    expect(statusOf(r.events[0])).toBe('SEMANTIC_HIT');
  });
});

// ---- coalescing --------------------------------------------------------------------------------

describe('withCache: coalescing', () => {
  it('two concurrent identical misses call run once and both get the answer, stored once', async () => {
    const e = env();
    const upstream = new Subject<GatewayEvent>();
    const run = runner(() => upstream);
    const a = collect(defer(run).pipe(withCache(options(e))));
    const b = collect(defer(run).pipe(withCache(options(e))));
    await settle();
    expect(run).toHaveBeenCalledTimes(1);
    expect(e.inflight.size).toBe(1);

    upstream.next(jsonAnswer('shared'));
    upstream.complete();
    const [ra, rb] = await Promise.all([a, b]);
    for (const r of [ra, rb]) {
      expect(r.error).toBeUndefined();
      expect(r.events).toHaveLength(1);
      expect(rawOf(r.events[0])).toBe(JSON.stringify(chatBody('shared')));
      expect(statusOf(r.events[0])).toBe('MISS');
    }
    await settle();
    expect(e.store.sets).toHaveLength(1);
    expect(e.inflight.size).toBe(0);
  });

  it('a request joining a stream late gets the chunks already sent', async () => {
    const e = env();
    const upstream = new Subject<GatewayEvent>();
    const run = runner(() => upstream);
    const a = collect(defer(run).pipe(withCache(options(e, { stream: true }))));
    await settle();
    upstream.next({ type: 'stream-start', meta });
    upstream.next({ type: 'chunk', data: chunkData('Hel') });
    const b = collect(defer(run).pipe(withCache(options(e, { stream: true }))));
    await settle();
    upstream.next({ type: 'chunk', data: chunkData('lo', 'stop') });
    upstream.complete();
    const [ra, rb] = await Promise.all([a, b]);
    expect(run).toHaveBeenCalledTimes(1);
    expect(rb.events).toEqual(ra.events);
    expect(rb.events.map((ev) => ev.type)).toEqual(['stream-start', 'chunk', 'chunk']);
  });

  it('a stream request and a JSON request do not share a call', async () => {
    const e = env();
    const run = runner(() => new Subject<GatewayEvent>());
    collect(defer(run).pipe(withCache(options(e, { stream: true }))));
    collect(defer(run).pipe(withCache(options(e, { stream: false }))));
    await settle();
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('one subscriber leaving does not cancel the call for the other; the last one leaving does', async () => {
    const e = env();
    let unsubscribed = 0;
    const upstream = new Subject<GatewayEvent>();
    const run = runner(
      () =>
        new Observable<GatewayEvent>((sub) => {
          const s = upstream.subscribe(sub);
          return () => {
            unsubscribed++;
            s.unsubscribe();
          };
        }),
    );
    const subs: Subscription[] = [];
    const got: GatewayEvent[][] = [[], []];
    for (const i of [0, 1]) subs.push(defer(run).pipe(withCache(options(e))).subscribe((ev) => got[i]!.push(ev)));
    await settle();
    expect(run).toHaveBeenCalledTimes(1);
    subs[0]!.unsubscribe();
    expect(unsubscribed).toBe(0);
    upstream.next(jsonAnswer('for the one left'));
    expect(got[0]).toEqual([]);
    expect(got[1]).toHaveLength(1);
    subs[1]!.unsubscribe();
    expect(unsubscribed).toBe(1);
    expect(e.inflight.size).toBe(0);
    await settle();
    expect(e.store.sets).toEqual([]); // never completed: nothing stored
  });
});
