import type { UpstreamLimits } from '../upstream/limits.js';
import type { Observable, SchedulerLike } from 'rxjs';
import type { PlanNode } from '../plan/types.js';
import type { HookStageDeps } from '../operators/request-hooks.js';
import type { CacheStore } from '../state/cache-store.js';
import type { VectorIndex } from '../state/vector-index.js';
import type { GatewayEvent } from '../upstream/events.js';
import type { Telemetry } from '../metrics/telemetry.js';
import type { ContextWindows } from '../pricing/context-windows.js';
import type { RequestSpan } from '../metrics/tracing.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { ProviderRequest } from '../providers/types.js';
import type { BreakerStore } from '../state/breaker-store.js';
import type { Dispatcher } from 'undici';
import { Flow } from '../upstream/flow.js';
import type { KeyScope } from '../limits/types.js';
import { RequestOutcome } from './outcome.js';

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
  /** The models' context windows (the Responses API's truncation rule); absent: the shipped table. */
  contextWindows?: ContextWindows;
  /** For providers whose `prepare` step fetches a token; absent until one needs it. */
  fetch?: typeof fetch;
}

/**
 * One request as the edge parsed it: what was asked (request data only), and `outcome`, the one
 * object its stages record what they learn into (pipeline/outcome.ts).
 */
export interface RequestContext {
  traceId: string;
  /** The plan this request runs (set by the edge once resolved). */
  plan?: PlanNode;
  /** The request; a before hook's mutator may replace it (a new object, the body changed). */
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
  /** The request's span when tracing is on (the edge starts it); each upstream attempt is a child of it. */
  span?: RequestSpan;
  /** What the stages learn: usage, cost, attempts, the failing target, cache status, hook results. */
  readonly outcome: RequestOutcome;
}

export function newContext(
  traceId: string,
  request: ProviderRequest,
  now: number,
  pathname: string,
  metadata?: Record<string, unknown>,
  workspace = '',
): RequestContext {
  const ctx = { traceId, request, pathname, workspace, startedAt: now, outcome: undefined } as unknown as { -readonly [K in keyof RequestContext]: RequestContext[K] };
  ctx.outcome = new RequestOutcome(ctx);
  if (metadata) ctx.metadata = metadata;
  if (request.stream) ctx.flow = new Flow();
  return ctx;
}
