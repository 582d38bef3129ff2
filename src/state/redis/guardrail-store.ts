import { GUARDRAILS, type GuardrailChange } from '../guardrail-store.js';
import type { RedisConnection } from './connection.js';
import { RedisResourceStore, type RedisResourceStoreOptions } from './resource-store.js';
import { resourceKeys } from './resource-scripts.js';

/** Where a prefix's guardrails live in Redis (`gr:`). Exported for tests that look behind the store's back. */
export const guardrailKeys = (prefix: string) => resourceKeys(prefix, GUARDRAILS.key);

/** Shared guardrails: one hash per guardrail with every version, a local mirror (resource-store.ts). */
export class RedisGuardrailStore extends RedisResourceStore<GuardrailChange> {
  constructor(conn: RedisConnection, opts: RedisResourceStoreOptions = {}) {
    super(GUARDRAILS, conn, opts);
  }
}
