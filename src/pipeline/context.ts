import type { UpstreamLimits } from '../upstream/limits.js';
import type { Observable, SchedulerLike } from 'rxjs';
import type { PlanNode } from '../plan/types.js';
import type { HookAccount } from '../checks/hooks.js';
import type { HookStageDeps } from '../operators/request-hooks.js';
import type { CacheStore } from '../state/cache-store.js';
import type { VectorIndex } from '../state/vector-index.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';
import type { Telemetry } from '../metrics/telemetry.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { ProviderRequest, Usage } from '../providers/types.js';
import type { BreakerStore } from '../state/breaker-store.js';
import type { Dispatcher } from 'undici';
import { Flow } from '../upstream/flow.js';
import type { Spent } from '../operators/accounting.js';
import type { KeyScope, LimitHold } from '../limits/types.js';

/** The cache's state and helpers; absent: caching is off. */
export interface CacheDeps {
  store: CacheStore;
  vectors: VectorIndex;
  embed: (text: string) => Promise<Float32Array>;
  available: () => boolean;
  defaultTtlSeconds: number;
  defaultThreshold: number;
  inflight: Map<string, Observable<GatewayEvent>>;
}

/** What every operator may use; handed in, never imported. */
export interface PipelineDeps {
  /** What the hook and guardrail stages use (checks' HTTP client and clock, metrics, async results). */
  hooks?: HookStageDeps;
  cache?: CacheDeps;
  registry: ProviderRegistry;
  /** The egress dispatcher (src/security/egress.ts): every provider call goes through its host guard. */
  dispatcher: Dispatcher;
  telemetry: Telemetry;
  breakers: BreakerStore;
  /** Idle limit between stream chunks once a stream has started (ms). */
  streamIdleTimeoutMs: number;
  /** Caps on what a provider's answer may take (--upstream-max-body, --upstream-max-event); defaults when absent. */
  upstreamLimits?: UpstreamLimits;
  /** A request's whole time budget, retries and their waits included (ms). */
  requestBudgetMs: number;
  /** Milliseconds; the scheduler's clock in tests. */
  now: () => number;
  random: () => number;
  scheduler?: SchedulerLike;
  /** For providers whose `prepare` step fetches a token; absent until one needs it. */
  fetch?: typeof fetch;
}

/** One request's state as it flows through the pipeline. */
export interface RequestContext {
  traceId: string;
  /** The plan this request runs (set by the edge once resolved). */
  plan?: PlanNode;
  /** What the request's hooks and guardrails produced (hook_results, 246). */
  hooks?: HookAccount;
  request: ProviderRequest;
  metadata?: Record<string, unknown>;
  /** The gateway key's name and scope (usage-limit policies match on them). */
  key?: KeyScope;
  /** Cache partitioning: the key's workspace, the namespace header, force refresh. */
  workspace: string;
  cacheNamespace?: string;
  cacheForceRefresh?: boolean;
  /** Request path, for conditional routing on url.pathname. */
  pathname: string;
  startedAt: number;
  /** Stream requests: backpressure from the client's socket to the upstream body. */
  flow?: Flow;
  /** Filled as the pipeline runs, read by the log line and metrics. */
  usage?: Usage;
  /** Every upstream attempt that answered, with its usage (what the request costs and counts). */
  spent?: Spent[];
  /** The request's cost in USD (every attempt priced; absent when a model has no price). */
  cost?: number;
  /** The usage-limit reservations this request holds (settled when its answer ends). */
  limits?: LimitHold;
  attempts: number;
  /**
   * The target whose attempt failed (or whose circuit refused it) last: an error response names it
   * in its x-gateway-* headers and log line. Set on failure only, so under race or fallback it is the
   * target whose error is the answer.
   */
  failed?: AnswerMeta;
  /** The cache lookup's result, when a cache ran (an error response's x-gateway-cache-status). */
  cacheStatus?: string;
  /** Upstream wait accounting: the union of time with at least one upstream call in flight. */
  upstreamActive: number;
  upstreamSince: number;
  upstreamMs: number;
}

export function newContext(
  traceId: string,
  request: ProviderRequest,
  now: number,
  pathname: string,
  metadata?: Record<string, unknown>,
  workspace = '',
): RequestContext {
  const ctx: RequestContext = {
    traceId,
    // Declared here although most requests run no hook: a context whose hooks ran then has the same
    // hidden class as one whose did not (adding the field later would fork them, and every stage
    // reading a context after it would meet two shapes).
    hooks: undefined,
    request,
    pathname,
    workspace,
    startedAt: now,
    attempts: 0,
    upstreamActive: 0,
    upstreamSince: 0,
    upstreamMs: 0,
  };
  if (metadata) ctx.metadata = metadata;
  if (request.stream) ctx.flow = new Flow();
  return ctx;
}
