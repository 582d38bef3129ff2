import { embedLocal } from '../cache/local-embedder.js';
import { createCheckDeps } from '../checks/deps.js';
import { PipelineError } from '../config/pipelines.js';
import type { Config } from '../config/schema.js';
import { hooksSummary } from '../http/request-log.js';
import type { HookStageDeps } from '../operators/request-hooks.js';
import { ContextWindows } from '../pricing/context-windows.js';
import type { CacheDeps, PipelineDeps } from '../pipeline/context.js';
import { providerEmbedder } from '../pipeline/provider-embedder.js';
import type { Stages } from '../pipeline/run-request.js';
import { buildPlan, type PlanDeps } from '../plan/build-plan.js';
import { guardrailLookup } from '../management/guardrails.js';
import type { Basics } from './basics.js';
import { buildUsageLimits } from './limits.js';
import type { Providers } from './providers.js';
import type { State } from './state.js';
import { BackgroundRuns } from '../pipeline/background-runs.js';
import type { ResponsesDeps } from '../pipeline/response-stage.js';

/** What a request runs on: how plans are built, the pipeline's deps and the stages beyond the plan. */
export interface Pipeline {
  planDeps: PlanDeps;
  deps: PipelineDeps;
  stages: Stages;
  /** Stops the usage limits' timers and closes the checks' HTTP client. */
  close(): Promise<void>;
}

/** The pipeline's deps: plan building, provider calls, hooks, the cache, usage limits. */
export function buildPipeline(b: Basics, random: () => number, providers: Providers, state: State): Pipeline {
  const { options, telemetry, now } = b;
  const { registry, hostGuard, egress } = providers;
  const { stores, catalog } = state;
  const planDeps: PlanDeps = {
    // A key made in a workspace (or an organisation) serves only that workspace's requests: the
    // resolver looks ids up in the requesting key's scope.
    virtualKeys: catalog.virtualKeys,
    registry,
    hostGuard,
    guardrails: guardrailLookup(stores.guardrails),
    guardrailsVersion: () => stores.guardrails.generation(),
  };
  // What guardrail and hook checks use: the host-guarded HTTP client (webhook, log, JWKS, URL
  // lookups), the JWKS cache and the clock.
  const checkDeps = createCheckDeps(hostGuard, { allowUrlLookups: options['check-url-lookups'], dispatcher: egress.dispatcher });
  // What one target call uses (the semantic cache's embeddings target too).
  const calls: PipelineDeps = {
    registry,
    dispatcher: egress.dispatcher,
    telemetry,
    breakers: stores.breakers,
    streamIdleTimeoutMs: options['stream-idle-timeout'],
    upstreamLimits: { maxBody: options['upstream-max-body'], maxEvent: options['upstream-max-event'] },
    requestBudgetMs: options['request-budget'],
    now,
    random,
    fetch: egress.fetch,
    contextWindows: new ContextWindows(b.bootstrap?.context_windows),
  };
  const deps: PipelineDeps = { ...calls, cache: cacheDeps(b, state, planDeps, calls), hooks: hookDeps(b, checkDeps) };
  const usageLimits = buildUsageLimits(b, providers, state, checkDeps.http);
  const responses: ResponsesDeps = {
    store: stores.responses,
    background: new BackgroundRuns({ max: options['background-max'], maxPerKey: options['background-max-per-key'] }),
    now,
    storeFailed: (id, e) => b.logger.warn({ msg: 'a response was not stored', response_id: id, error: (e as Error).message }),
  };
  return {
    planDeps,
    deps,
    stages: { usageLimits, ledger: usageLimits, responses },
    close() {
      responses.background.close();
      usageLimits.stop();
      return checkDeps.close();
    },
  };
}

/** Async hooks finish after the answer (and its log line): their results get a line of their own. */
function hookDeps(b: Basics, checks: HookStageDeps['checks']): HookStageDeps {
  const { logger, telemetry } = b;
  return {
    checks,
    telemetry,
    onAsync: (traceId, results, phase) =>
      logger.info({
        msg: 'async hooks',
        trace_id: traceId,
        hooks: phase === 'request' ? hooksSummary(results, []) : hooksSummary([], results),
      }),
  };
}

/** The cache's stores and defaults; embeddings from the bootstrap file's target, else the local embedder. */
function cacheDeps(b: Basics, state: State, planDeps: PlanDeps, calls: PipelineDeps): CacheDeps {
  const { options, bootstrap } = b;
  const embeddings = bootstrap?.semantic_cache?.embeddings;
  let embed: CacheDeps['embed'] = (text) => Promise.resolve(embedLocal(text));
  if (embeddings) {
    const node = buildPlan({ virtual_key: embeddings.virtual_key } as Config, planDeps, 'semantic_cache.embeddings');
    if (node.kind !== 'target') throw new PipelineError('semantic_cache.embeddings must name one target');
    embed = providerEmbedder(node, embeddings.model, () => calls);
  }
  return {
    store: state.stores.cache,
    vectors: state.stores.vectors,
    embed,
    available: state.stores.available,
    defaultTtlSeconds: options['cache-ttl'],
    defaultThreshold: options['semantic-threshold'],
    inflight: new Map(),
  };
}
