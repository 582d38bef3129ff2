import { defer, map, tap, type MonoTypeOperatorFunction } from 'rxjs';
import type { TenantScope } from '../security/tenancy.js';
import type { ResponseStore, StoredResponse } from '../state/response-store.js';
import type { GatewayEvent } from '../upstream/events.js';
import { completeResponse, newId } from './response-object.js';

type Obj = Record<string, unknown>;

export interface RecordResponseOptions {
  store: ResponseStore;
  /** The client's request body (before any rebuilding of its input): the fields the response echoes. */
  body: Obj;
  /** The request's input items (with ids), stored beside the response. */
  inputItems: readonly Obj[];
  /** The gateway key's (organisation, workspace): only its keys read the response. */
  owner: TenantScope;
  /** Milliseconds (the pipeline's clock). */
  now: () => number;
  /** The id the gateway announced (a background response): the answer is stored, and answered, under it. */
  id?: string;
  /** What a response left unfinished becomes when its subscriber leaves (the client cancelled). */
  abandoned: Obj;
  /** Each write's result: a failed write is reported here (the answer goes on). */
  written?: (record: StoredResponse, error?: unknown) => void;
}

/** The stream events whose `response` is a snapshot of the whole response. */
const SNAPSHOTS = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed', 'response.queued']);
const FINAL = new Set(['completed', 'incomplete', 'failed', 'cancelled']);
const CACHE_HITS = new Set(['HIT', 'SEMANTIC_HIT']);

/** The event's type, for the chunks the recorder reads (its SSE name, or a peek at its data). */
function chunkType(ev: Extract<GatewayEvent, { type: 'chunk' }>): string | undefined {
  if (ev.comment) return undefined;
  if (ev.event !== undefined) return ev.event.startsWith('response.') ? ev.event : undefined;
  if (!ev.data.includes('"response.')) return undefined;
  try {
    return (JSON.parse(ev.data) as Obj).type as string | undefined;
  } catch {
    return undefined; // not JSON: nothing the recorder reads
  }
}

/**
 * What one answer's recorder knows: the response so far, under which id, and whether it ended.
 * `id` is fixed by the first event that shows one: the announced id, a fresh one for a cached answer
 * (a replay is a new response), else the answer's own (the gateway's when it translated, the
 * upstream's when it passed the answer through).
 */
class Recording {
  id: string | undefined;
  snapshot: Obj | undefined;
  ended = false;
  fresh = false;
  private readonly createdAt: number;

  constructor(private readonly o: RecordResponseOptions) {
    this.id = o.id;
    this.createdAt = Math.floor(o.now() / 1000);
  }

  /** The answer's response object: kept, stored, and (its id rewritten when it must be) answered. */
  take(response: Obj): Obj {
    this.id ??= this.fresh ? newId('resp') : typeof response.id === 'string' ? response.id : newId('resp');
    this.snapshot = completeResponse(response, this.o.body, this.id, (response.created_at as number | undefined) ?? this.createdAt);
    if (FINAL.has(this.snapshot.status as string)) this.ended = true;
    this.store(this.snapshot);
    return this.answered(response);
  }

  /**
   * The response as the client gets it: under the recording's id, and with the client's own
   * `previous_response_id` (the upstream saw the rebuilt conversation, not the id).
   */
  private answered(response: Obj): Obj {
    const previous = this.o.body.previous_response_id;
    if (response.id === this.id && (previous === undefined || response.previous_response_id === previous)) return response;
    return previous === undefined ? { ...response, id: this.id } : { ...response, id: this.id, previous_response_id: previous };
  }

  /** A finished output item of a stream: kept, so a stream cut later stores what it had. */
  item(index: unknown, item: Obj): void {
    if (!this.snapshot) return;
    const output = [...((this.snapshot.output as Obj[] | undefined) ?? [])];
    output[typeof index === 'number' ? index : output.length] = item;
    this.snapshot = { ...this.snapshot, output };
  }

  /** The response ended without its final event: stored with `patch` (failed, or abandoned). */
  end(patch: Obj): void {
    if (this.ended) return;
    this.ended = true;
    if (this.id === undefined) return; // nothing named it: no client can ask for it
    this.store({ ...completeResponse(this.snapshot ?? {}, this.o.body, this.id, this.createdAt), ...patch });
  }

  private store(response: Obj): void {
    const record: StoredResponse = { response, input_items: this.o.inputItems, owner: this.o.owner };
    this.o.store.put(record).then(
      () => this.o.written?.(record),
      (e: unknown) => this.o.written?.(record, e),
    );
  }
}

/** A chunk as answered: its snapshot's id rewritten when the recording names the response otherwise. */
function onChunk(rec: Recording, ev: Extract<GatewayEvent, { type: 'chunk' }>): GatewayEvent {
  const type = chunkType(ev);
  if (type === undefined || (type !== 'response.output_item.done' && !SNAPSHOTS.has(type))) return ev;
  const data = JSON.parse(ev.data) as Obj;
  if (type === 'response.output_item.done') rec.item(data.output_index, data.item as Obj);
  if (!SNAPSHOTS.has(type) || typeof data.response !== 'object' || data.response === null) return ev;
  const response = data.response as Obj;
  const answered = rec.take(response);
  return answered === response ? ev : { ...ev, data: JSON.stringify({ ...data, response: answered }) };
}

function onEvent(rec: Recording, ev: GatewayEvent): GatewayEvent {
  switch (ev.type) {
    case 'stream-start':
      rec.fresh = CACHE_HITS.has(ev.meta.cacheStatus ?? '');
      return ev;
    case 'chunk':
      return onChunk(rec, ev);
    case 'json': {
      rec.fresh = CACHE_HITS.has(ev.meta.cacheStatus ?? '');
      if (ev.status >= 400 || typeof ev.body !== 'object' || ev.body === null) return ev;
      const body = ev.body as Obj;
      const answered = rec.take({ status: 'completed', ...body });
      rec.ended = true;
      if (answered.id === body.id && answered.previous_response_id === body.previous_response_id) return ev;
      const { raw: _raw, ...rest } = ev;
      return { ...rest, body: { ...body, id: answered.id, previous_response_id: answered.previous_response_id } };
    }
  }
}

/**
 * Records the Responses answer passing through: each snapshot the stream shows (`in_progress`, then
 * `completed`, `incomplete` or `failed`) or the JSON answer is stored under the response's id. An
 * answer that fails, or a stream that ends before its final event, is stored `failed` (error
 * `server_error`); one whose subscriber leaves first is stored with `abandoned`. A record is never
 * left `in_progress` by an answer that is over.
 */
export function recordResponse(o: RecordResponseOptions): MonoTypeOperatorFunction<GatewayEvent> {
  return (source) =>
    defer(() => {
      const rec = new Recording(o);
      return source.pipe(
        map((ev) => onEvent(rec, ev)),
        tap({
          error: (e: unknown) => rec.end({ status: 'failed', error: { code: 'server_error', message: e instanceof Error ? e.message : String(e) } }),
          complete: () => rec.end({ status: 'failed', error: { code: 'server_error', message: 'The answer ended before the response was complete.' } }),
          unsubscribe: () => rec.end(o.abandoned),
        }),
      );
    });
}
