import type { BreakerStore, Transition } from './breaker-store.js';
import type { CacheStore } from './cache-store.js';
import type { StoreObserver } from './store-events.js';
import type { VectorIndex } from './vector-index.js';
import type { GuardrailStore } from './guardrail-store.js';
import { MemoryGuardrailStore } from './memory/guardrail-store.js';
import { RedisGuardrailStore } from './redis/guardrail-store.js';
import { PROMPTS, type PromptStore } from './prompt-store.js';
import { MemoryResourceStore } from './memory/resource-store.js';
import { RedisResourceStore } from './redis/resource-store.js';
import type { PolicyStore } from './policy-store.js';
import { MemoryPolicyStore } from './memory/policy-store.js';
import { RedisPolicyStore } from './redis/policy-store.js';
import type { UsageCounters } from './usage-counters.js';
import { MemoryUsageCounters } from './memory/usage-counters.js';
import { RedisUsageCounters } from './redis/usage-counters.js';
import { MemoryBreakerStore } from './memory/breaker-store.js';
import { MemoryCacheStore } from './memory/cache-store.js';
import { MemoryVectorIndex } from './memory/vector-index.js';
import { createRedis, type StoreLogger } from './redis/connection.js';
import { RedisBreakerStore } from './redis/breaker-store.js';
import { RedisCacheStore } from './redis/cache-store.js';
import { RedisVectorIndex } from './redis/vector-index.js';
import type { RequestLogStore } from './request-log-store.js';
import type { ApiKeyStore } from './api-key-store.js';
import { MemoryApiKeyStore } from './memory/api-key-store.js';
import { RedisApiKeyStore } from './redis/api-key-store.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import type { VirtualKey } from '../config/bootstrap.js';
import type { SecretSealer } from '../security/master-key.js';
import type { VirtualKeyStore } from './virtual-key-store.js';
import { MemoryVirtualKeyStore } from './memory/virtual-key-store.js';
import { RedisVirtualKeyStore } from './redis/virtual-key-store.js';
import { MemoryRequestLogStore } from './memory/request-log-store.js';
import { RedisRequestLogStore } from './redis/request-log-store.js';
import type { ResponseStore } from './response-store.js';
import { memoryResponseStore } from './memory/response-store.js';
import { redisResponseStore } from './redis/response-store.js';
import type { CancelChannel } from './cancel-channel.js';
import { RedisCancelChannel } from './redis/cancel-channel.js';

/** Every piece of state the gateway holds, built once: memory (embedded default) or Redis (shared). */
export interface Stores {
  kind: 'memory' | 'redis';
  cache: CacheStore;
  vectors: VectorIndex;
  breakers: BreakerStore;
  /** Stored guardrails (the guardrails API); reads answer from memory (with Redis: a mirror). */
  guardrails: GuardrailStore;
  /** Prompt templates (the prompts API, bootstrap `prompts`); reads answer from memory (with Redis: a mirror). */
  prompts: PromptStore;
  /** Usage-limit policies (the usage-limits API, bootstrap `usage_limits`); enforcement reads a mirror. */
  policies: PolicyStore;
  /** The policies' usage counters (reservations, usage per period and group, alert flags). */
  usage: UsageCounters;
  /** Request records (GET /v1/logs): a memory ring, or one capped stream shared through Redis. */
  requestLogs: RequestLogStore;
  /** Stored responses (POST/GET /v1/responses): bounded in memory, or shared through Redis; each kept for a time to live. */
  responses: ResponseStore;
  /** With Redis: cancel requests for background responses, answered by the instance that runs each. */
  responseCancels?: CancelChannel;
  /** Gateway keys: the declared ones (this process's), and those made through /v1/api-keys (shared with Redis). */
  apiKeys: ApiKeyStore;
  /** Virtual keys: the bootstrap file's (this process's), and those made through /v1/virtual-keys (shared with Redis, secrets sealed). */
  virtualKeys: VirtualKeyStore;
  /** Made virtual keys in the shared store that this instance cannot open (no or another master key): id → why. */
  unreadableVirtualKeys(): ReadonlyMap<string, string>;
  /** False while a shared backend is unreachable: caching is skipped (DISABLED), breakers run locally. */
  available(): boolean;
  /** Resolves when the stores can serve; with Redis, rejects (clearly) when it is not reachable in time. */
  start(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  redisUrl?: string;
  cacheMaxBytes: number;
  /** Request records kept (--request-log-size). */
  requestLogSize: number;
  /** Stored responses: the memory bound (--response-max-bytes) and the time to live (--response-ttl). */
  responseMaxBytes: number;
  responseTtlSeconds: number;
  /** The operator's gateway keys (options, bootstrap file, generated): kept in this process, never written to Redis. */
  declaredKeys: readonly { key: string; record: ApiKeyRecord }[];
  /** The bootstrap file's virtual keys: kept in this process, never written to Redis. */
  declaredVirtualKeys: Record<string, VirtualKey>;
  /** Seals virtual keys' secrets in Redis (SLUICE_MASTER_KEY; during a rotation, opens SLUICE_MASTER_KEY_PREVIOUS's too). */
  masterKey: SecretSealer | undefined;
  observer: StoreObserver;
  logger: StoreLogger;
  onRemoteTransition?: (id: string, t: Transition) => void;
}

export function createStores(o: StoreOptions): Stores {
  return o.redisUrl ? redisStores(o.redisUrl, o) : memoryStores(o);
}

/** The embedded default: every piece of state in this process. */
function memoryStores(o: StoreOptions): Stores {
  return {
    kind: 'memory',
    cache: new MemoryCacheStore({ maxBytes: o.cacheMaxBytes }),
    vectors: new MemoryVectorIndex(),
    breakers: new MemoryBreakerStore(),
    guardrails: new MemoryGuardrailStore(),
    prompts: new MemoryResourceStore(PROMPTS),
    policies: new MemoryPolicyStore(),
    usage: new MemoryUsageCounters(),
    requestLogs: new MemoryRequestLogStore(o.requestLogSize),
    responses: memoryResponseStore({ maxBytes: o.responseMaxBytes, ttlSeconds: o.responseTtlSeconds }),
    apiKeys: new MemoryApiKeyStore(o.declaredKeys),
    virtualKeys: new MemoryVirtualKeyStore(o.declaredVirtualKeys),
    unreadableVirtualKeys: () => new Map(),
    available: () => true,
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

/** Shared state: every instance on the same Redis serves from it. */
function redisStores(url: string, o: StoreOptions): Stores {
  const conn = createRedis(url, { observer: o.observer, logger: o.logger, connectionName: 'sluice' });
  const vectors = new RedisVectorIndex(conn);
  const breakers = new RedisBreakerStore(conn, o.onRemoteTransition ? { onRemoteTransition: o.onRemoteTransition } : {});
  const guardrails = new RedisGuardrailStore(conn);
  const prompts = new RedisResourceStore(PROMPTS, conn);
  const apiKeys = new RedisApiKeyStore(conn, { declared: o.declaredKeys });
  const virtualKeys = new RedisVirtualKeyStore(conn, { declared: o.declaredVirtualKeys, ...(o.masterKey ? { masterKey: o.masterKey } : {}) });
  const policies = new RedisPolicyStore(conn);
  const responseCancels = new RedisCancelChannel(conn);
  return {
    kind: 'redis',
    cache: new RedisCacheStore(conn),
    vectors,
    breakers,
    guardrails,
    prompts,
    policies,
    usage: new RedisUsageCounters(conn),
    requestLogs: new RedisRequestLogStore(conn, { capacity: o.requestLogSize }),
    responses: redisResponseStore(conn, { ttlSeconds: o.responseTtlSeconds }),
    responseCancels,
    apiKeys,
    virtualKeys,
    unreadableVirtualKeys: () => virtualKeys.unreadable(),
    available: () => conn.available(),
    async start(timeoutMs) {
      await conn.waitUntilReady(timeoutMs);
      await Promise.all([vectors.ready(timeoutMs), breakers.ready(timeoutMs), guardrails.ready(timeoutMs), prompts.ready(timeoutMs), apiKeys.ready(timeoutMs), virtualKeys.ready(timeoutMs), policies.ready(timeoutMs), responseCancels.ready(timeoutMs)]);
    },
    async close() {
      vectors.close();
      breakers.close();
      guardrails.close();
      prompts.close();
      apiKeys.close();
      virtualKeys.close();
      policies.close();
      responseCancels.close();
      await conn.close();
    },
  };
}
