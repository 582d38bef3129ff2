import type { Request, RequestHandler, Response } from 'express';
import { parseBody } from '../../config/bodies.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { runPlan } from '../../pipeline/run-plan.js';
import { newContext } from '../../pipeline/context.js';
import type { RequestSettings } from '../../config/headers.js';
import type { ApiKeyRecord } from '../../security/api-keys.js';
import type { Endpoint } from '../../providers/types.js';
import { sendError } from '../errors.js';
import { respond } from '../respond.js';
import type { AppDeps } from '../app.js';

/** Cache entries are private to a workspace (else an organisation, else the key's name). */
function workspaceOf(key: ApiKeyRecord | undefined): string {
  if (!key) return '';
  return key.workspace_id ? `ws:${key.workspace_id}` : key.organisation_id ? `org:${key.organisation_id}` : `key:${key.name}`;
}

function jsonBody(req: Request): unknown {
  if (req.body === undefined) {
    if (!req.is('application/json') && !req.is('+json')) throw new GatewayError('unsupported_media_type');
    throw new GatewayError('invalid_json', 'The request body is empty.');
  }
  return req.body;
}

/**
 * The route every proxied endpoint shares: validate the body, resolve the plan from the headers,
 * run it, write what it emits. No provider names, no strategy branches.
 */
export function proxyRoute(endpoint: Endpoint, deps: AppDeps): RequestHandler {
  return (req: Request, res: Response) => {
    const traceId = res.locals.traceId as string;
    try {
      const plan = deps.resolver.resolve(req.headers);
      const body = endpoint === 'models' ? undefined : (parseBody(endpoint, jsonBody(req)) as Record<string, unknown>);
      const settings = res.locals.settings as RequestSettings;
      const ctx = newContext(
        traceId,
        { endpoint, body, stream: endpoint !== 'embeddings' && body?.stream === true, headers: req.headers },
        deps.pipeline.now(),
        req.baseUrl + req.path,
        settings.metadata,
        workspaceOf(res.locals.gatewayKey as ApiKeyRecord),
      );
      if (settings.cacheNamespace !== undefined) ctx.cacheNamespace = settings.cacheNamespace;
      if (settings.cacheForceRefresh) ctx.cacheForceRefresh = true;
      res.locals.ctx = ctx;
      respond(runPlan(plan, ctx, deps.pipeline), req, res, ctx);
    } catch (e) {
      sendError(res, e, traceId);
    }
  };
}
