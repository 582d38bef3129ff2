/**
 * Stored responses (GET /v1/responses/:id), behind a port: the response object the gateway
 * answered, the request's input items, and the (organisation, workspace) of the gateway key that
 * made it. Kept as one JSON value per id in a key/value store (src/state/cache-store.ts): in memory
 * (bounded in bytes, least recently used out first) or in Redis (shared by every instance); both
 * with the time to live the operator sets.
 */
import type { TenantScope } from '../security/tenancy.js';
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
}

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

  put(record: StoredResponse): Promise<void> {
    const id = record.response.id;
    if (typeof id !== 'string' || id === '') return Promise.reject(new Error('a stored response needs its id'));
    return this.kv.set(id, JSON.stringify(record), this.ttlSeconds);
  }

  delete(id: string): Promise<void> {
    return this.kv.delete(id);
  }
}
