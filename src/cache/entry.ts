import type { Endpoint, Usage } from '../providers/types.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';
import { chunkEvent, chunksToJson, jsonToChunks } from './assemble.js';

/** What the cache stores: an answer as it was sent (JSON, or a stream's chunks), and who gave it. */
export interface CacheEntry {
  v: 1;
  kind: 'json' | 'stream';
  status: number;
  provider: string;
  target: string;
  /** JSON answer text, verbatim. */
  body?: string;
  /** Stream chunks' JSON texts, in order. */
  chunks?: string[];
  usage?: Usage;
}

/**
 * Collects a successful answer's events into an entry; undefined when it cannot be stored (an error,
 * or an answer that failed an output check: a hit would replay it as a clean 200).
 */
export class EntryRecorder {
  private kind: 'json' | 'stream' | undefined;
  private status = 0;
  private meta: AnswerMeta | undefined;
  private body: string | undefined;
  private readonly chunks: string[] = [];
  private usage: Usage | undefined;

  record(ev: GatewayEvent): void {
    switch (ev.type) {
      case 'json':
        this.kind = 'json';
        this.status = ev.status;
        this.meta = ev.meta;
        this.body = ev.raw ?? JSON.stringify(ev.body);
        if (ev.usage) this.usage = ev.usage;
        return;
      case 'stream-start':
        this.kind = 'stream';
        this.status = 200;
        this.meta = ev.meta;
        return;
      case 'chunk':
        if (ev.data !== '') this.chunks.push(ev.data);
        if (ev.usage) this.usage = ev.usage;
        return;
    }
  }

  entry(): CacheEntry | undefined {
    if (!this.kind || !this.meta || this.status < 200 || this.status >= 300 || this.meta.hooksFailed) return undefined;
    const e: CacheEntry = { v: 1, kind: this.kind, status: this.status, provider: this.meta.provider, target: this.meta.target };
    if (this.kind === 'json') e.body = this.body;
    else e.chunks = this.chunks;
    if (this.usage) e.usage = this.usage;
    return e;
  }
}

/** Replay an entry as the events the request expects: JSON or a stream, whichever form it was stored in. */
export function replay(entry: CacheEntry, endpoint: Endpoint, stream: boolean, cacheStatus: string, includeUsage = false): GatewayEvent[] {
  const meta: AnswerMeta = { provider: entry.provider, target: entry.target, retries: 0, cacheStatus };
  if (!stream) {
    if (entry.kind === 'json') return [{ type: 'json', status: entry.status, body: undefined, raw: entry.body, meta }];
    const body = chunksToJson(endpoint, entry.chunks!.map((c) => JSON.parse(c)));
    // The usage-only chunk is hidden from stream clients that did not ask for it, but kept in the entry.
    if (!body.usage && entry.usage) body.usage = entry.usage;
    return [{ type: 'json', status: 200, body, raw: JSON.stringify(body), meta }];
  }
  const chunks = entry.kind === 'stream' ? entry.chunks! : jsonToChunks(endpoint, JSON.parse(entry.body!)).map((c) => JSON.stringify(c));
  return [{ type: 'stream-start', meta }, ...withUsageAsAsked(chunks, entry, includeUsage).map((data) => chunkEvent(endpoint, data))];
}

const isUsageOnly = (data: string): boolean => {
  if (!data.includes('"usage"')) return false;
  const c = JSON.parse(data) as { choices?: unknown[]; usage?: unknown };
  return Array.isArray(c.choices) && c.choices.length === 0 && c.usage != null;
};

/**
 * A stored stream's chunks without its usage-only chunk, worked out once per entry: entries are
 * shared and never mutated (see `parseEntry`), and with include_usage every chunk names "usage", so
 * filtering on each hit would parse every chunk of a hot answer again.
 */
const contentOf = new WeakMap<readonly string[], readonly string[]>();

function contentChunks(chunks: readonly string[]): readonly string[] {
  let content = contentOf.get(chunks);
  if (!content) {
    content = chunks.filter((c) => !isUsageOnly(c));
    contentOf.set(chunks, content);
  }
  return content;
}

/** The usage-only chunk as the client asked (`stream_options.include_usage`), whoever filled the cache. */
function withUsageAsAsked(chunks: readonly string[], entry: CacheEntry, includeUsage: boolean): readonly string[] {
  const content = entry.kind === 'stream' ? contentChunks(chunks) : chunks.filter((c) => !isUsageOnly(c));
  if (!includeUsage || !entry.usage) return content;
  const first = (content[0] ? JSON.parse(content[0]) : {}) as Record<string, unknown>;
  const usageChunk = { id: first.id, object: first.object, created: first.created, model: first.model, choices: [], usage: entry.usage };
  return [...content, JSON.stringify(usageChunk)];
}

/**
 * Recently read entries, by their stored text: a hot answer is parsed once, not on every hit (the
 * memory store hands back the same string, whose hash V8 keeps; Redis texts hash in native code, far
 * cheaper than parsing). Entries are never mutated after parsing, so sharing them is safe.
 */
const recent = new Map<string, CacheEntry>();
const RECENT_MAX = 256;

export function parseEntry(text: string): CacheEntry | undefined {
  const hit = recent.get(text);
  if (hit) return hit;
  const e = parseEntryText(text);
  if (e) {
    if (recent.size >= RECENT_MAX) recent.delete(recent.keys().next().value!);
    recent.set(text, e);
  }
  return e;
}

function parseEntryText(text: string): CacheEntry | undefined {
  try {
    const e = JSON.parse(text) as CacheEntry;
    if (!e || typeof e !== 'object' || e.v !== 1 || typeof e.status !== 'number') return undefined;
    if (typeof e.provider !== 'string' || typeof e.target !== 'string') return undefined;
    if (e.kind === 'json') return typeof e.body === 'string' ? e : undefined;
    if (e.kind === 'stream') return Array.isArray(e.chunks) && e.chunks.every((c) => typeof c === 'string') ? e : undefined;
    return undefined;
  } catch {
    return undefined;
  }
}
