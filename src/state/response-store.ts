/**
 * Stored responses (GET /v1/responses/:id), behind a port: the response object the gateway
 * answered, the request's input items, and the (organisation, workspace) of the gateway key that
 * made it. Kept as one JSON value per id in a key/value store (src/state/cache-store.ts): in memory
 * (bounded in bytes, least recently used out first) or in Redis (shared by every instance); both
 * with the time to live the operator sets.
 */
import { sameTenant, type TenantScope } from '../security/tenancy.js';
import type { CacheStore } from './cache-store.js';

/** One response as stored. */
export interface StoredResponse {
  /** The response object (`id`, `object: "response"`, `status`, `output`, ...). */
  readonly response: Record<string, unknown>;
  /** The request's own input items (each with an `id`), oldest first; a previous response's are its own. */
  readonly input_items: readonly Record<string, unknown>[];
  /** Whose it is: the gateway key's organisation and workspace. */
  readonly owner: TenantScope;
}

/** The port the recorder, the routes and the previous-response expansion use. */
export interface ResponseStore {
  readonly kind: 'memory' | 'redis';
  /** The stored response, or undefined when absent or expired. Rejects when the store is unavailable. */
  get(id: string): Promise<StoredResponse | undefined>;
  /** Store (or replace) the response under its `response.id`. */
  put(record: StoredResponse): Promise<void>;
  delete(id: string): Promise<void>;
  /**
   * An input or output item of a stored response of tenant `owner`, by its id (`item_reference`);
   * undefined when none is known. Items are found once their response is stored queued or has ended.
   */
  item(id: string, owner: TenantScope): Promise<Record<string, unknown> | undefined>;
}

/** Statuses a record's items are indexed at: its input is known (queued) or its output is whole. */
const INDEXED = new Set(['queued', 'completed', 'incomplete', 'failed', 'cancelled']);

/** The index entry of item `id` of tenant `owner` (client-chosen ids are unique only within a tenant). */
const itemKey = (owner: TenantScope, id: string): string => `item:${JSON.stringify([owner.organisation_id ?? null, owner.workspace_id ?? null, id])}`;

const itemsOf = (r: StoredResponse): Record<string, unknown>[] => [...r.input_items, ...((r.response.output as Record<string, unknown>[] | undefined) ?? [])];

/** Thirty days, as the OpenAI Responses API keeps a response. */
export const RESPONSE_TTL_SECONDS_DEFAULT = 30 * 24 * 3600;

/** A ResponseStore over a key/value store: one JSON value per response id, each kept `ttlSeconds`. */
export class KeyValueResponseStore implements ResponseStore {
  readonly kind: 'memory' | 'redis';

  constructor(
    private readonly kv: CacheStore,
    private readonly ttlSeconds: number,
  ) {
    this.kind = kv.kind;
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    const text = await this.kv.get(id);
    return text === undefined ? undefined : (JSON.parse(text) as StoredResponse);
  }

  /** The record under its id; at a status in INDEXED, each item's id also names the record (`item`). */
  put(record: StoredResponse): Promise<void> {
    const id = record.response.id;
    if (typeof id !== 'string' || id === '') return Promise.reject(new Error('a stored response needs its id'));
    const writes = [this.kv.set(id, JSON.stringify(record), this.ttlSeconds)];
    if (INDEXED.has(record.response.status as string)) {
      for (const item of itemsOf(record)) if (typeof item.id === 'string') writes.push(this.kv.set(itemKey(record.owner, item.id), id, this.ttlSeconds));
    }
    return Promise.all(writes).then(() => undefined);
  }

  async item(id: string, owner: TenantScope): Promise<Record<string, unknown> | undefined> {
    const responseId = await this.kv.get(itemKey(owner, id));
    const record = responseId === undefined ? undefined : await this.get(responseId);
    if (!record || !sameTenant(record.owner, owner)) return undefined;
    return itemsOf(record).find((i) => i.id === id);
  }

  delete(id: string): Promise<void> {
    return this.kv.delete(id);
  }
}
