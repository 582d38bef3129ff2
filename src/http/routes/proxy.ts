import { parseBody } from '../../config/bodies.js';
import { runPlan } from '../../pipeline/run-plan.js';
import { newContext } from '../../pipeline/context.js';
import type { PlanNode } from '../../plan/types.js';
import type { ApiKeyRecord } from '../../security/api-keys.js';
import type { Endpoint } from '../../providers/types.js';
import { readJsonBody } from '../body.js';
import { sendError } from '../errors.js';
import type { Exchange } from '../exchange.js';
import { respond } from '../respond.js';
import type { AppDeps } from '../app.js';

/** Cache entries are private to a workspace (else an organisation, else the key's name). */
function workspaceOf(key: ApiKeyRecord | undefined): string {
  if (!key) return '';
  return key.workspace_id ? `ws:${key.workspace_id}` : key.organisation_id ? `org:${key.organisation_id}` : `key:${key.name}`;
}

/**
 * The route every proxied endpoint shares: resolve the plan from the headers, read and validate the
 * body, run the plan, write what it emits. No provider names, no strategy branches.
 */
export function proxyRoute(endpoint: Endpoint, pathname: string, deps: AppDeps): (ex: Exchange) => void {
  const start = (ex: Exchange, plan: PlanNode, raw: unknown): void => {
    const body = endpoint === 'models' ? undefined : (parseBody(endpoint, raw) as Record<string, unknown>);
    const settings = ex.settings;
    const ctx = newContext(
      ex.traceId,
      { endpoint, body, stream: endpoint !== 'embeddings' && body?.stream === true, headers: ex.req.headers },
      deps.pipeline.now(),
      pathname,
      settings.metadata,
      workspaceOf(ex.gatewayKey),
    );
    if (settings.cacheNamespace !== undefined) ctx.cacheNamespace = settings.cacheNamespace;
    if (settings.cacheForceRefresh) ctx.cacheForceRefresh = true;
    ex.ctx = ctx;
    respond(runPlan(plan, ctx, deps.pipeline), ex, ctx);
  };
  return (ex) => {
    let plan: PlanNode;
    try {
      plan = deps.resolver.resolve(ex.req.headers);
      if (endpoint === 'models') return start(ex, plan, undefined);
    } catch (e) {
      sendError(ex, e);
      return;
    }
    readJsonBody(ex.req, deps.bodyLimitBytes, (err, raw) => {
      if (ex.res.writableEnded) return; // already answered (the shutdown deadline ended it)
      if (err) return void sendError(ex, err);
      try {
        start(ex, plan, raw);
      } catch (e) {
        sendError(ex, e);
      }
    });
  };
}
