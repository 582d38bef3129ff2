import type { Observable } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import { circuitBreaker, circuitOpenError } from '../operators/circuit-breaker.js';
import { conditional } from '../operators/conditional.js';
import { fallback } from '../operators/fallback.js';
import { loadbalance } from '../operators/loadbalance.js';
import { race } from '../operators/race.js';
import { retryWithBackoff } from '../operators/retry.js';
import { compileQuery, type Predicate } from '../plan/query.js';
import type { PlanNode, StrategyNode, TargetNode } from '../plan/types.js';
import { nodeIdentity, routesOnMetadata, targetIdentity } from '../plan/identity.js';
import { withCache } from '../operators/cache.js';
import { canonicalBody, canonicalJson, sha256 } from '../cache/canonical.js';
import { promptText } from '../cache/local-embedder.js';
import type { NodeSettings } from '../plan/types.js';
import type { BreakerPolicy } from '../state/breaker-store.js';
import { callTarget, targetLabels } from './call-target.js';
import { memoByObject } from '../util/memo.js';
import type { PipelineDeps, RequestContext } from './context.js';
import type { GatewayEvent } from './events.js';

function policyOf(node: TargetNode): BreakerPolicy | undefined {
  const cb = node.settings.cb_config;
  return cb ? { failureThreshold: cb.failure_threshold, cooldownMs: cb.cooldown_interval } : undefined;
}

/** Can this node serve now? A target whose circuit is open cannot; a strategy can if any child can. */
function retryAfterIfClosed(node: PlanNode, deps: PipelineDeps): number {
  if (node.kind === 'target') {
    const policy = policyOf(node);
    if (!policy) return 0;
    const a = deps.breakers.peek(targetIdentity(node), deps.now(), policy);
    return a.kind === 'open' ? a.retryAfterMs : 0;
  }
  let min = Infinity;
  for (const c of node.children) {
    // A loadbalance never picks a weight-0 child: it cannot make the node able to serve.
    if (node.kind === 'loadbalance' && c.weight <= 0) continue;
    const r = retryAfterIfClosed(c, deps);
    if (r === 0) return 0;
    min = Math.min(min, r);
  }
  return min;
}

function runTarget(node: TargetNode, ctx: RequestContext, deps: PipelineDeps): Observable<GatewayEvent> {
  let call = callTarget(node, ctx, deps);
  const labels = targetLabels(node, ctx.request.endpoint);
  const retry = node.settings.retry;
  if (retry && retry.attempts > 0) {
    call = call.pipe(
      retryWithBackoff<GatewayEvent>({
        attempts: retry.attempts,
        onStatusCodes: retry.on_status_codes,
        useRetryAfterHeaders: retry.use_retry_after_headers,
        budgetLeftMs: () => ctx.startedAt + deps.requestBudgetMs - deps.now(),
        now: deps.now,
        random: deps.random,
        onRetry: () => deps.telemetry.retry(labels),
        scheduler: deps.scheduler,
      }),
    );
  }
  const policy = policyOf(node);
  if (policy) {
    call = call.pipe(
      circuitBreaker<GatewayEvent>({
        store: deps.breakers,
        id: targetIdentity(node),
        policy,
        failureStatusCodes: node.settings.cb_config!.failure_status_codes,
        now: deps.now,
        onState: (status, transition) => deps.telemetry.circuit(node.id, status, transition),
      }),
    );
  }
  return call;
}

function shouldFallBack(codes: readonly number[] | undefined) {
  return (err: unknown): boolean => {
    if (!(err instanceof GatewayError)) return false;
    if (err.code === 'circuit_open' || !codes || codes.length === 0) return true;
    return codes.includes(err.status);
  };
}

interface CompiledConditions {
  preds: Predicate[];
  targets: number[];
  defaultIndex: number;
}
const conditionsOf = memoByObject((node: StrategyNode): CompiledConditions => {
  const indexOf = (name: string): number => node.children.findIndex((ch) => ch.name === name);
  const conds = node.conditions ?? [];
  return {
    preds: conds.map((q, i) => compileQuery(q.query, `${node.path}.strategy.conditions[${i}].query`)),
    targets: conds.map((q) => indexOf(q.then)),
    defaultIndex: indexOf(node.default!),
  };
});

function pickCondition(node: StrategyNode, ctx: RequestContext): number {
  const c = conditionsOf(node);
  const input = { metadata: ctx.metadata, params: ctx.request.body, url: { pathname: ctx.pathname } };
  for (let i = 0; i < c.preds.length; i++) if (c.preds[i]!(input)) return c.targets[i]!;
  return c.defaultIndex;
}

type CacheSettings = NonNullable<NodeSettings['cache']>;

/** The cache in front of `node`: keys cover provider identity, workspace, namespace (else metadata) and the canonical request. */
function cached(node: PlanNode, cache: CacheSettings, ctx: RequestContext, deps: PipelineDeps, run: () => Observable<GatewayEvent>): Observable<GatewayEvent> {
  const c = deps.cache!;
  const req = ctx.request;
  // The namespace header replaces metadata in the key, unless a conditional below routes on metadata.
  const metadata = canonicalJson(ctx.metadata ?? {});
  const ns = ctx.cacheNamespace === undefined ? metadata : routesOnMetadata(node) ? `${ctx.cacheNamespace}\n${metadata}` : ctx.cacheNamespace;
  const scope = `${nodeIdentity(node)}\n${ctx.workspace}\n${ns}\n${req.endpoint}`;
  const key = `c:${sha256(`${scope}\n${canonicalBody(req.body)}`)}`;
  const semantic = cache.mode === 'semantic' && req.endpoint !== 'embeddings' && req.endpoint !== 'models';
  const text = semantic ? promptText(req.body) : undefined;
  return withCache(run, {
    mode: cache.mode,
    ttlSeconds: cache.max_age ?? c.defaultTtlSeconds,
    threshold: cache.similarity_threshold ?? c.defaultThreshold,
    key,
    ...(text !== undefined ? { text, partition: `p:${sha256(`${scope}\n${String(req.body?.model ?? '')}`)}` } : {}),
    endpoint: req.endpoint,
    stream: req.stream,
    includeUsage: (req.body?.stream_options as { include_usage?: boolean } | null | undefined)?.include_usage === true,
    forceRefresh: ctx.cacheForceRefresh === true,
    store: c.store,
    vectors: c.vectors,
    embed: c.embed,
    available: c.available,
    inflight: c.inflight,
    ...(req.stream && ctx.flow ? { flow: ctx.flow } : {}),
    onLookup: (mode, status) => deps.telemetry.cacheLookup(mode, status),
  });
}

/**
 * Plan → Observable. The node kind picks the operator; the order of stages is written here once:
 * cache (where a config level declares one) → strategy or target.
 */
export function runPlan(node: PlanNode, ctx: RequestContext, deps: PipelineDeps, parentCache?: CacheSettings): Observable<GatewayEvent> {
  const cache = node.settings.cache;
  // Inherited settings are the parent's own object: only the level that declares a cache wraps one.
  if (cache && cache !== parentCache && deps.cache) return cached(node, cache, ctx, deps, () => runNode(node, ctx, deps));
  return runNode(node, ctx, deps);
}

function runNode(node: PlanNode, ctx: RequestContext, deps: PipelineDeps): Observable<GatewayEvent> {
  if (node.kind === 'target') return runTarget(node, ctx, deps);
  const children = node.children.map((c) => () => runPlan(c, ctx, deps, node.settings.cache));
  switch (node.kind) {
    case 'single':
      return children[0]!();
    case 'fallback':
      return fallback(children, shouldFallBack(node.on_status_codes), (i) =>
        deps.telemetry.fallback(node.name ?? node.path, node.children[i]!.name ?? node.children[i]!.path),
      );
    case 'loadbalance':
      return loadbalance(
        node.children.map((c, i) => ({ weight: c.weight, eligible: () => retryAfterIfClosed(c, deps) === 0, run: children[i]! })),
        deps.random,
        () => circuitOpenError(retryAfterIfClosed(node, deps)),
      );
    case 'conditional':
      return conditional(() => pickCondition(node, ctx), children);
    case 'race':
      return race(children, node.hedge_after_ms ?? 0, deps.scheduler);
  }
}
