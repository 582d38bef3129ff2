import { Observable, of, type Subscription } from 'rxjs';
import { hooksOf } from '../plan/hooks.js';
import type { HookSpec } from '../checks/hooks.js';
import { requestHooks, requestHooksNow, type HookStageDeps } from '../operators/request-hooks.js';
import { responseHooks } from '../operators/response-hooks.js';
import { GatewayError } from '../errors/gateway-error.js';
import { circuitBreaker, circuitOpenError } from '../operators/circuit-breaker.js';
import { conditional } from '../operators/conditional.js';
import { fallback, type PassOver } from '../operators/fallback.js';
import { noTargetCanServe, TargetCannotServe } from '../errors/cannot-serve.js';
import { loadbalance, type Weighted } from '../operators/loadbalance.js';
import { race } from '../operators/race.js';
import { retryWithBackoff, type RetryOperator } from '../operators/retry.js';
import { compileQuery } from '../plan/query.js';
import type { PlanNode, StrategyNode, TargetNode } from '../plan/types.js';
import { nodeIdentity, routesOnMetadata, targetIdentity } from '../plan/identity.js';
import { withCache } from '../operators/cache.js';
import { strictOpenAI } from '../operators/strict-openai.js';
import { cacheKeys } from '../cache/key.js';
import type { NodeSettings } from '../plan/types.js';
import type { BreakerPolicy } from '../state/breaker-store.js';
import type { Endpoint } from '../providers/types.js';
import { callTarget, targetLabels } from './call-target.js';
import type { PipelineDeps, RequestContext } from './context.js';
import type { GatewayEvent } from '../upstream/events.js';

/** A compiled plan node: built once per plan, called once per request with that request's context. */
export type Run = (ctx: RequestContext) => Observable<GatewayEvent>;

function policyOf(node: TargetNode): BreakerPolicy | undefined {
  const cb = node.settings.cb_config;
  return cb ? { failureThreshold: cb.failure_threshold, cooldownMs: cb.cooldown_interval } : undefined;
}

/**
 * A target whose translator refused the request was never asked: fallback and loadbalance move on
 * whatever their status codes say, and only when no target can serve is the refusal the answer.
 */
const PASS_OVER: PassOver = {
  test: (err) => err instanceof TargetCannotServe,
  none: (errors) => noTargetCanServe(errors as TargetCannotServe[]),
};

function shouldFallBack(codes: readonly number[] | undefined) {
  return (err: unknown): boolean => {
    if (!(err instanceof GatewayError)) return false;
    if (err.code === 'circuit_open' || !codes || codes.length === 0) return true;
    return codes.includes(err.status);
  };
}

type CacheSettings = NonNullable<NodeSettings['cache']>;

/**
 * Plan → a function from a request's context to its Observable of events, composed once per plan
 * (compiled nodes are kept per plan node object, and plans are cached by the resolver). Everything
 * derived from the config (breaker policy, retry operator, metric labels, compiled conditions, the
 * cache's identity, the children) is built here once; a request only creates its Observables.
 *
 * The order of the stages a node declares is written here once: cache (the level that declares one)
 * → strategy or target; per target: circuit breaker → retry → (timeout → upstream call), measured.
 */
export class PlanRunner {
  private readonly compiled = new WeakMap<PlanNode, Run>();

  constructor(private readonly deps: PipelineDeps) {}

  run(plan: PlanNode, ctx: RequestContext): Observable<GatewayEvent> {
    return this.compile(plan)(ctx);
  }

  compile(node: PlanNode): Run {
    let run = this.compiled.get(node);
    if (!run) {
      run = this.build(node);
      this.compiled.set(node, run);
    }
    return run;
  }

  /**
   * A node's own stages, in this order: input guardrails → before hooks → cache → the node (strategy
   * or target). Each wraps the node at the config level that declares it; children inherit the
   * settings without running them again. Output guardrails and after hooks run per target (below).
   */
  private build(node: PlanNode): Run {
    let run = node.kind === 'target' ? this.target(node) : this.strategy(node);
    const cache = node.settings.cache;
    if (cache && this.deps.cache && node.declares.includes('cache')) run = this.cached(node, cache, run);
    const hooks = hooksOf(node);
    for (const list of ['before_request_hooks', 'input_guardrails'] as const) {
      if (node.declares.includes(list) && hooks[list].length > 0) run = this.requestStage(hooks[list], run);
    }
    return run;
  }

  private hookDeps(): HookStageDeps {
    const h = this.deps.hooks;
    if (!h) throw new Error('a plan with hooks or guardrails needs PipelineDeps.hooks');
    return h;
  }

  /** Input guardrails or before hooks in front of `inner`: a deny is a 446 and `inner` never runs. */
  private requestStage(hooks: readonly HookSpec[], inner: Run): Run {
    const now = requestHooksNow<RequestContext>(hooks, this.hookDeps());
    if (now) {
      // Hooks that only compute run at once when the node is subscribed (not when its Observable is
      // made: a strategy may make a child's and never run it); a throw is the 446.
      return (ctx) =>
        new Observable<GatewayEvent>((subscriber) => {
          try {
            now(ctx);
          } catch (e) {
            subscriber.error(e);
            return;
          }
          return inner(ctx).subscribe(subscriber);
        });
    }
    const stage = requestHooks<RequestContext>(hooks, this.hookDeps());
    // One context in, at most one out: `inner` runs on it once the stage lets it through (what
    // switchMap would do, without its per-request inner-subscription bookkeeping).
    return (ctx) =>
      new Observable<GatewayEvent>((subscriber) => {
        let answer: Subscription | undefined;
        const checked = stage(of(ctx)).subscribe({
          next: (c) => {
            answer = inner(c).subscribe(subscriber);
          },
          error: (e: unknown) => subscriber.error(e),
        });
        return () => {
          checked.unsubscribe();
          answer?.unsubscribe();
        };
      });
  }

  /** Can this node serve now? A target whose circuit is open cannot; a strategy can if any child can. */
  private retryAfterIfClosed(node: PlanNode): number {
    const deps = this.deps;
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
      const r = this.retryAfterIfClosed(c);
      if (r === 0) return 0;
      min = Math.min(min, r);
    }
    return min;
  }

  private target(node: TargetNode): Run {
    const deps = this.deps;
    let run: Run = (ctx) => callTarget(node, ctx, deps);
    // Output guardrails then after hooks (own or inherited) check this target's answer inside its
    // retry and breaker: a 446 is an error that retry (on_status_codes: [446]) and fallback see.
    const hooks = hooksOf(node);
    const answerHooks = [...hooks.output_guardrails, ...hooks.after_request_hooks];
    if (answerHooks.length > 0) {
      const stage = responseHooks(answerHooks, node.path, this.hookDeps());
      const call = run;
      run = (ctx) => call(ctx).pipe(stage(ctx));
    }
    const retry = node.settings.retry;
    if (retry && retry.attempts > 0) {
      // One operator per endpoint (metric labels differ), made the first time a request needs it.
      const byEndpoint: Partial<Record<Endpoint, RetryOperator<GatewayEvent>>> = {};
      const retryFor = (endpoint: Endpoint): RetryOperator<GatewayEvent> =>
        (byEndpoint[endpoint] ??= retryWithBackoff<GatewayEvent>({
          attempts: retry.attempts,
          onStatusCodes: retry.on_status_codes,
          useRetryAfterHeaders: retry.use_retry_after_headers,
          now: deps.now,
          random: deps.random,
          onRetry: () => deps.telemetry.retry(targetLabels(node, endpoint)),
          scheduler: deps.scheduler,
        }));
      const call = run;
      const budget = deps.requestBudgetMs;
      run = (ctx) => retryFor(ctx.request.endpoint)(call(ctx), () => ctx.startedAt + budget - deps.now());
    }
    const policy = policyOf(node);
    if (policy) {
      const breaker = circuitBreaker<GatewayEvent>({
        store: deps.breakers,
        id: targetIdentity(node),
        policy,
        failureStatusCodes: node.settings.cb_config!.failure_status_codes,
        now: deps.now,
        onState: (status, transition) => deps.telemetry.circuit(node.id, status, transition),
      });
      const guarded = run;
      // An error response names the target whose circuit refused it (x-gateway-* headers, log line).
      const refused = { provider: deps.registry.get(node.target.provider).descriptor.id, target: node.path, retries: 0 };
      run = (ctx) =>
        breaker(guarded(ctx), () => {
          ctx.failed = refused;
        });
    }
    if (node.settings.strict_vendor_compliance === true) {
      // Only OpenAI's fields leave this target; one operator per endpoint and mode, made on first use.
      const strict: Partial<Record<string, ReturnType<typeof strictOpenAI>>> = {};
      const inner = run;
      run = (ctx) => {
        const { endpoint, stream } = ctx.request;
        return inner(ctx).pipe((strict[`${endpoint}:${stream}`] ??= strictOpenAI(endpoint, stream)));
      };
    }
    return run;
  }

  private strategy(node: StrategyNode): Run {
    const deps = this.deps;
    const children = node.children.map((c) => this.compile(c));
    switch (node.kind) {
      case 'single':
        return children[0]!;
      case 'fallback': {
        const fallBack = shouldFallBack(node.on_status_codes);
        const onFallback = (i: number): void =>
          deps.telemetry.fallback(node.name ?? node.path, node.children[i]!.name ?? node.children[i]!.path);
        return (ctx) => fallback(children, fallBack, onFallback, ctx, PASS_OVER);
      }
      case 'loadbalance': {
        const weighted: Weighted<GatewayEvent, RequestContext>[] = node.children.map((c, i) => ({
          weight: c.weight,
          eligible: () => this.retryAfterIfClosed(c) === 0,
          run: children[i]!,
        }));
        const none = (): Error => circuitOpenError(this.retryAfterIfClosed(node));
        return (ctx) => loadbalance(weighted, deps.random, none, ctx, PASS_OVER);
      }
      case 'conditional': {
        const indexOf = (name: string): number => node.children.findIndex((ch) => ch.name === name);
        const conds = node.conditions ?? [];
        const preds = conds.map((q, i) => compileQuery(q.query, `${node.path}.strategy.conditions[${i}].query`));
        const targets = conds.map((q) => indexOf(q.then));
        const defaultIndex = indexOf(node.default!);
        const pick = (ctx: RequestContext): number => {
          const input = { metadata: ctx.metadata, params: ctx.request.body, url: { pathname: ctx.pathname } };
          for (let i = 0; i < preds.length; i++) if (preds[i]!(input)) return targets[i]!;
          return defaultIndex;
        };
        return (ctx) => conditional(pick, children, ctx);
      }
      case 'race': {
        const hedge = node.hedge_after_ms ?? 0;
        return (ctx) => race(children, hedge, deps.scheduler, undefined, ctx);
      }
    }
  }

  /** The cache in front of `node`: keys are made in cache/key.ts. */
  private cached(node: PlanNode, cache: CacheSettings, inner: Run): Run {
    const c = this.deps.cache!;
    const telemetry = this.deps.telemetry;
    const identity = nodeIdentity(node);
    const onMetadata = routesOnMetadata(node);
    const semantic = cache.mode === 'semantic';
    const ttlSeconds = cache.max_age ?? c.defaultTtlSeconds;
    const threshold = cache.similarity_threshold ?? c.defaultThreshold;
    return (ctx) => {
      const req = ctx.request;
      const keys = cacheKeys({
        identity,
        routesOnMetadata: onMetadata,
        workspace: ctx.workspace,
        metadata: ctx.metadata,
        namespace: ctx.cacheNamespace,
        endpoint: req.endpoint,
        body: req.body,
        semantic,
      });
      return withCache(() => inner(ctx), {
        mode: cache.mode,
        ttlSeconds,
        threshold,
        ...keys,
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
        onLookup: (mode, status) => {
          ctx.cacheStatus = status;
          telemetry.cacheLookup(mode, status);
        },
      });
    };
  }
}
