import { defer } from 'rxjs';
import type { HookSpec } from '../checks/hooks.js';
import { cacheKeys } from '../cache/key.js';
import { withCache } from '../operators/cache.js';
import { checkRequest, type HookStageDeps } from '../operators/request-hooks.js';
import { nodeIdentity, routesOnMetadata } from '../plan/identity.js';
import type { PlanNode } from '../plan/types.js';
import type { Endpoint } from '../config/wire.js';
import type { GatewayEvent } from '../upstream/events.js';
import type { PipelineDeps } from './context.js';
import { after, type Wrap } from './stage.js';
import { isLater } from '../util/now-or-later.js';

/** Input guardrails or before hooks in front of the run inside: a deny is a 446 and that run never starts. */
export function hookGate(hooks: readonly HookSpec[], deps: HookStageDeps): Wrap {
  const check = checkRequest({ hooks, deps });
  // Hooks run when the node is subscribed (not when its Observable is made: a strategy may make a
  // child's and never run it); a denial thrown at once is the Observable's error.
  return (inner) => (ctx) =>
    defer(() => {
      const checked = check(ctx.outcome);
      return isLater(checked) ? after(checked, inner, ctx) : inner(ctx);
    });
}

/**
 * The endpoints whose answers the cache can store and replay in either form (src/cache/assemble.ts);
 * any other runs uncached (its cache status DISABLED): a token count.
 */
const CACHEABLE: ReadonlySet<Endpoint> = new Set<Endpoint>(['chat', 'completions', 'embeddings', 'models', 'responses', 'messages']);

/** Request headers that change a Messages answer (beta features), kept in its cache key. */
const ANSWER_HEADERS: Partial<Record<Endpoint, readonly string[]>> = { messages: ['anthropic-beta'] };

/**
 * The values of the request's headers that change its answer, in the cache key's form: each a list of
 * flags, trimmed and sorted (their order and spacing change nothing); undefined when the endpoint has none.
 */
function answerHeaders(endpoint: Endpoint, headers: Record<string, string | string[] | undefined>): Record<string, string> | undefined {
  const names = ANSWER_HEADERS[endpoint];
  if (!names) return undefined;
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = headers[name];
    if (v === undefined) continue;
    const flags = (Array.isArray(v) ? v.join(',') : v).split(',').map((f) => f.trim()).filter((f) => f !== '');
    out[name] = flags.sort().join(',');
  }
  return out;
}

/** The cache in front of the run inside, at the level that declares it: keys are made in cache/key.ts. */
export function cacheStage(node: PlanNode, deps: PipelineDeps): Wrap {
  const c = deps.cache!;
  const cache = node.settings.cache!;
  const telemetry = deps.telemetry;
  const identity = nodeIdentity(node);
  const onMetadata = routesOnMetadata(node);
  const semantic = cache.mode === 'semantic';
  const ttlSeconds = cache.max_age ?? c.defaultTtlSeconds;
  const threshold = cache.similarity_threshold ?? c.defaultThreshold;
  return (inner) => (ctx) => {
    const req = ctx.request;
    if (!CACHEABLE.has(req.endpoint)) return inner(ctx);
    const keys = cacheKeys({
      identity,
      routesOnMetadata: onMetadata,
      workspace: ctx.workspace,
      metadata: ctx.metadata,
      namespace: ctx.cacheNamespace,
      endpoint: req.endpoint,
      body: req.body,
      headers: answerHeaders(req.endpoint, req.headers),
      semantic,
    });
    return inner(ctx).pipe(
      withCache({
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
          ctx.outcome.cacheStatus = status;
          telemetry.cacheLookup(mode, status);
        },
      }),
    );
  };
}
