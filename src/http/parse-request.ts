import { newContext, type RequestContext } from '../pipeline/context.js';
import type { PlanNode } from '../plan/types.js';
import type { IngressFormat } from '../ingress/types.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import { tenantKey } from '../security/tenancy.js';
import { memoByObject } from '../util/memo.js';
import { readJsonBody } from './body.js';
import { authenticate, type AppDeps } from './deps.js';
import type { Exchange } from './exchange.js';

/**
 * Cache entries are private to a tenant: the key's (organisation, workspace) pair (a workspace id of
 * another organisation is another workspace, security/tenancy.ts), else its organisation, else the
 * key's name. Made once per key record (the same object on every request with that key).
 */
const tenantOfKey = memoByObject((key: ApiKeyRecord): string =>
  key.workspace_id !== undefined || key.organisation_id !== undefined ? tenantKey(key) : `key:${key.name}`,
);

/** What the edge parses a proxied request with: its front door and the path conditions see. */
export interface ParseRoute {
  format: IngressFormat;
  pathname: string;
}

type ParseDeps = Pick<AppDeps, 'apiKeys' | 'resolver' | 'promptRenderer' | 'bodyLimitBytes' | 'pipeline' | 'tracing'>;

/** The raw body, its prompt rendered, validated → the request's context (`ex.ctx`); throws the 400. */
function contextOf(ex: Exchange, route: ParseRoute, deps: ParseDeps, plan: PlanNode, raw: unknown): RequestContext {
  const format = route.format;
  // The prompt is rendered before the body is validated: the template may give model and messages.
  const rendered = deps.promptRenderer.render(plan.prompt, format.endpoint, raw, ex.gatewayKey, ex);
  const settings = ex.settings;
  const key = ex.gatewayKey;
  const ctx = newContext(
    ex.traceId,
    format.toRequest(format.parse(rendered), ex.headers),
    deps.pipeline.now(),
    route.pathname,
    settings.metadata,
    key ? tenantOfKey(key) : '',
  );
  ctx.plan = plan;
  if (ex.span) ctx.span = ex.span;
  if (key) ctx.key = key;
  if (settings.cacheNamespace !== undefined) ctx.cacheNamespace = settings.cacheNamespace;
  if (settings.cacheForceRefresh) ctx.cacheForceRefresh = true;
  ex.ctx = ctx;
  return ctx;
}

/**
 * The edge's half of a proxied request: the exchange → a parsed, authenticated request, in this
 * order, each refusal its own status: the gateway key (401), the plan from the headers or the stored
 * config (400/404, cached), the JSON body (400/413/415; none for a body-less endpoint), the plan's
 * prompt rendered into it (400), the body validated into the request's context (400). `done` gets
 * the first refusal or the context, with its plan, once; the pipeline (src/pipeline/run-request.ts)
 * takes it from there.
 */
export function parseRequest(ex: Exchange, route: ParseRoute, deps: ParseDeps, done: (err: unknown, ctx?: RequestContext) => void): void {
  let plan: PlanNode;
  // Tracing on: the request's span starts with the exchange (a refusal below is traced too).
  if (deps.tracing) ex.span = deps.tracing.startRequest(ex.traceId, ex.startedAtMs);
  try {
    authenticate(ex, deps.apiKeys);
    plan = deps.resolver.resolve(ex.headers, ex.gatewayKey);
  } catch (e) {
    return done(e);
  }
  const finish = (raw: unknown): void => {
    let ctx: RequestContext;
    try {
      ctx = contextOf(ex, route, deps, plan, raw);
    } catch (e) {
      return done(e);
    }
    done(undefined, ctx);
  };
  if (!route.format.hasBody) return finish(undefined);
  readJsonBody(ex.req, deps.bodyLimitBytes, (err, raw) => (err ? done(err) : finish(raw)));
}
