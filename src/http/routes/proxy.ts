import { Observable, type OperatorFunction } from 'rxjs';
import { parseBody } from '../../config/bodies.js';
import type { PlanRunner } from '../../pipeline/run-plan.js';
import { newContext } from '../../pipeline/context.js';
import { requestPipeline, type RequestEdge } from '../../pipeline/run-request.js';
import type { ApiKeyRecord } from '../../security/api-keys.js';
import { tenantKey } from '../../security/tenancy.js';
import { memoByObject } from '../../util/memo.js';
import type { Endpoint } from '../../providers/types.js';
import { readJsonBody } from '../body.js';
import type { Exchange } from '../exchange.js';
import { respond } from '../respond.js';
import { authenticate, type AppDeps } from '../deps.js';
import type { Params } from '../router.js';
import type { GatewayEvent } from '../../upstream/events.js';

/**
 * Cache entries are private to a tenant: the key's (organisation, workspace) pair (a workspace id of
 * another organisation is another workspace, security/tenancy.ts), else its organisation, else the
 * key's name. Made once per key record (the same object on every request with that key).
 */
const tenantOfKey = memoByObject((key: ApiKeyRecord): string =>
  key.workspace_id !== undefined || key.organisation_id !== undefined ? tenantKey(key) : `key:${key.name}`,
);

function workspaceOf(key: ApiKeyRecord | undefined): string {
  return key ? tenantOfKey(key) : '';
}

/**
 * The request body as an Observable: one value, or the 400/413/415. Unsubscribing drops a late
 * result. The callback holds the subscriber only until it is called or unsubscribed (it sits on the
 * request, which outlives the answer on a kept-alive socket).
 */
function bodyOf(ex: Exchange, limit: number): Observable<unknown> {
  return new Observable<unknown>((subscriber) => {
    let target: typeof subscriber | undefined = subscriber;
    readJsonBody(ex.req, limit, (err, raw) => {
      const s = target;
      target = undefined;
      if (!s || s.closed) return;
      if (err) return s.error(err);
      s.next(raw);
      s.complete();
    });
    return () => {
      target = undefined;
    };
  });
}

/**
 * The route every proxied endpoint shares: the edge's half of the request pipeline (how to
 * authenticate, resolve, read the body and make the context from an HTTP exchange), the pipeline's
 * order (src/pipeline/run-request.ts), and the writer. No provider names, no strategy branches.
 * `answer`, when given, makes the route's answer from the pipeline's (with the path parameters).
 */
export function proxyRoute(
  endpoint: Endpoint,
  pathname: string,
  deps: AppDeps,
  runner: PlanRunner,
  answer?: (params: Params) => OperatorFunction<GatewayEvent, GatewayEvent>,
): (ex: Exchange, params: Params) => void {
  const edge: RequestEdge<Exchange> = {
    authenticate: (ex) => authenticate(ex, deps.apiKeys),
    resolve: (ex) => deps.resolver.resolve(ex.headers, ex.gatewayKey),
    readBody: endpoint === 'models' ? () => undefined : (ex) => bodyOf(ex, deps.bodyLimitBytes),
    renderPrompt: (ex, plan, raw) => deps.promptRenderer.render(plan.prompt, endpoint, raw, ex.gatewayKey, ex),
    context(ex, plan, raw) {
      const body = endpoint === 'models' ? undefined : (parseBody(endpoint, raw) as Record<string, unknown>);
      const settings = ex.settings;
      const ctx = newContext(
        ex.traceId,
        { endpoint, body, stream: endpoint !== 'embeddings' && body?.stream === true, headers: ex.headers },
        deps.pipeline.now(),
        pathname,
        settings.metadata,
        workspaceOf(ex.gatewayKey),
      );
      ctx.plan = plan;
      if (ex.gatewayKey) ctx.key = ex.gatewayKey;
      if (settings.cacheNamespace !== undefined) ctx.cacheNamespace = settings.cacheNamespace;
      if (settings.cacheForceRefresh) ctx.cacheForceRefresh = true;
      ex.ctx = ctx;
      return ctx;
    },
  };
  const run = requestPipeline(edge, runner, deps.stages);
  const stallMs = deps.pipeline.streamIdleTimeoutMs;
  if (answer) return (ex, params) => respond(run(ex).pipe(answer(params)), ex, stallMs);
  return (ex) => respond(run(ex), ex, stallMs);
}
