import { defer, from, map, mergeMap, tap, type MonoTypeOperatorFunction, type Observable, type OperatorFunction } from 'rxjs';
import { EntryRecorder, parseEntry, replay, type CacheEntry } from '../cache/entry.js';
import type { GatewayEvent } from '../upstream/events.js';
import type { Endpoint } from '../providers/types.js';
import type { CacheStore } from '../state/cache-store.js';
import type { VectorIndex } from '../state/vector-index.js';
import { coalesce } from './coalesce.js';
import { paced } from './paced.js';
import type { Flow } from '../upstream/flow.js';

export type CacheStatus = 'HIT' | 'SEMANTIC_HIT' | 'MISS' | 'REFRESH' | 'DISABLED';

export interface CacheOptions {
  mode: 'simple' | 'semantic';
  ttlSeconds: number;
  threshold: number;
  /** Exact key of this request's answer. */
  key: string;
  /** Semantic partition (model, provider identity, workspace, namespace) and the text to embed. */
  partition?: string;
  text?: string;
  endpoint: Endpoint;
  stream: boolean;
  /** The client asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage?: boolean;
  forceRefresh: boolean;
  store: CacheStore;
  vectors: VectorIndex;
  embed: (text: string) => Promise<Float32Array>;
  /** False while the store is unreachable: the request goes straight upstream (DISABLED). */
  available: () => boolean;
  inflight: Map<string, Observable<GatewayEvent>>;
  /** Stream requests: the client's flow control (replays and shared calls are paced by it). */
  flow?: Flow;
  onLookup?: (mode: string, status: CacheStatus) => void;
}

const tag =
  (status: CacheStatus): OperatorFunction<GatewayEvent, GatewayEvent> =>
  (source) =>
    source.pipe(map((ev) => (ev.type === 'chunk' ? ev : { ...ev, meta: { ...ev.meta, cacheStatus: status } })));

type Lookup = { status: 'HIT' | 'SEMANTIC_HIT'; entry: CacheEntry } | { status: 'MISS'; vector?: Float32Array } | { status: 'DISABLED' };

/** The prompt's vector in semantic mode; undefined otherwise, or when the embeddings target failed (exact matching only, this time). */
async function embed(o: CacheOptions): Promise<Float32Array | undefined> {
  if (o.mode !== 'semantic' || o.text === undefined || o.partition === undefined) return undefined;
  try {
    return await o.embed(o.text);
  } catch {
    return undefined;
  }
}

function save(o: CacheOptions, entry: CacheEntry, vector: Float32Array | undefined): void {
  o.store.set(o.key, JSON.stringify(entry), o.ttlSeconds).then(
    () => (vector ? o.vectors.add(o.partition!, o.key, vector, o.ttlSeconds) : undefined),
    () => undefined, // reported by the store's observer
  ).catch(() => undefined);
}

/** `exactMissed`: getSync already found no usable entry under the key (do not ask again). */
async function lookup(o: CacheOptions, exactMissed: boolean): Promise<Lookup> {
  try {
    if (!exactMissed) {
      const text = await o.store.get(o.key);
      const entry = text === undefined ? undefined : parseEntry(text);
      if (entry) return { status: 'HIT', entry };
    }
    const vector = await embed(o);
    if (vector) {
      const match = await o.vectors.search(o.partition!, vector, o.threshold);
      if (match) {
        const t2 = await o.store.get(match.id);
        const e2 = t2 === undefined ? undefined : parseEntry(t2);
        if (e2) return { status: 'SEMANTIC_HIT', entry: e2 };
      }
    }
    return vector ? { status: 'MISS', vector } : { status: 'MISS' };
  } catch {
    return { status: 'DISABLED' };
  }
}

/** The upstream answer, shared with concurrent identical misses, stored when it succeeds. */
function fetchAndStore(upstream: Observable<GatewayEvent>, o: CacheOptions, status: CacheStatus, vector: Float32Array | undefined): Observable<GatewayEvent> {
  return defer(() => {
    const rec = new EntryRecorder();
    return upstream.pipe(
      tap({
        next: (ev) => rec.record(ev),
        complete: () => {
          const entry = rec.entry();
          if (entry) save(o, entry, vector);
        },
      }),
    );
  }).pipe(coalesce({ inflight: o.inflight, key: `${o.key}:${o.stream ? (o.includeUsage ? 'su' : 's') : 'j'}`, flow: o.flow }), tag(status));
}

const replayed = (o: CacheOptions, entry: CacheEntry, status: 'HIT' | 'SEMANTIC_HIT'): Observable<GatewayEvent> =>
  from(replay(entry, o.endpoint, o.stream, status, o.includeUsage === true)).pipe(paced(o.flow));

/**
 * Answer from the cache when it can; else subscribe the source (the upstream answer), and store a
 * successful answer (JSON, or a stream that ended cleanly) for `ttlSeconds`. Semantic mode tries the
 * exact key first, then the most similar stored prompt in the partition. Concurrent identical misses
 * share one upstream call. A store that fails (Redis away) never fails the request: it goes upstream,
 * DISABLED.
 */
export function withCache(o: CacheOptions): MonoTypeOperatorFunction<GatewayEvent> {
  return (upstream) =>
    defer(() => {
      if (!o.available()) {
        o.onLookup?.(o.mode, 'DISABLED');
        return upstream.pipe(tag('DISABLED'));
      }
      if (o.forceRefresh) {
        o.onLookup?.(o.mode, 'REFRESH');
        return from(embed(o)).pipe(mergeMap((v) => fetchAndStore(upstream, o, 'REFRESH', v)));
      }
      // An in-process store: an exact hit is answered synchronously (no promise hops on the hot path).
      if (o.store.getSync) {
        const text = o.store.getSync(o.key);
        const entry = text === undefined ? undefined : parseEntry(text);
        if (entry) {
          o.onLookup?.(o.mode, 'HIT');
          return replayed(o, entry, 'HIT');
        }
      }
      return from(lookup(o, o.store.getSync !== undefined)).pipe(
        mergeMap((r) => {
          o.onLookup?.(o.mode, r.status);
          switch (r.status) {
            case 'HIT':
            case 'SEMANTIC_HIT':
              return replayed(o, r.entry, r.status);
            case 'MISS':
              return fetchAndStore(upstream, o, 'MISS', r.vector);
            case 'DISABLED':
              return upstream.pipe(tag('DISABLED'));
          }
        }),
      );
    });
}
