import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { GatewayError } from '../errors/gateway-error.js';
import { requestLogWriter } from './request-log.js';
import { requestRecord } from './request-record.js';
import { authenticate, type AppDeps } from './deps.js';
import type { ApiKeyStore } from '../state/api-key-store.js';
import { sendError } from './errors.js';
import { Exchange, exchangeOf } from './exchange.js';
import { interruptExchange } from './respond.js';
import type { Socket } from 'node:net';
import { INGRESS } from '../ingress/index.js';
import { ingressRoutes } from './routes/proxy.js';
import { guardrailRoutes } from './routes/guardrails.js';
import { policyRoutes } from './routes/policies.js';
import { promptRoutes } from './routes/prompts.js';
import { logRoutes } from './routes/logs.js';
import { responseRoutes } from './routes/responses.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { virtualKeyRoutes } from './routes/virtual-keys.js';
import { LogsService } from '../management/logs.js';
import { PlanRunner } from '../pipeline/run-plan.js';
import { RequestRunner } from '../pipeline/run-request.js';
import type { RequestContext } from '../pipeline/context.js';
import { Router, type HotRoute, type Params } from './router.js';


/**
 * Ends every exchange still in flight on `sockets` with `err` (the shutdown deadline): a plan's
 * answer is cut (JSON error, or an SSE error event on a started stream) and its upstream call
 * aborted; anything else gets the JSON error. The exchange is found from the response its socket is
 * writing. Resolves when each response has been handed to the socket (or closed).
 */
export function endInFlight(sockets: Iterable<Socket>, err: GatewayError): Promise<void> {
  const ends: Promise<void>[] = [];
  for (const socket of [...sockets]) {
    const ex = exchangeOf((socket as unknown as { _httpMessage?: unknown })._httpMessage);
    if (!ex) continue;
    const res = ex.res;
    if (!res.writableFinished && !res.destroyed) {
      ends.push(
        new Promise((resolve) => {
          res.once('finish', resolve);
          res.once('close', resolve);
        }),
      );
    }
    interruptExchange(ex, err);
  }
  return Promise.all(ends).then(() => undefined);
}

/** The gateway key (x-gateway-api-key, else Authorization: Bearer) → the key's record, or the 401 sent. */
function authenticated(ex: Exchange, keys: ApiKeyStore): boolean {
  try {
    authenticate(ex, keys);
    return true;
  } catch (e) {
    sendError(ex, e);
    return false;
  }
}

/** Operations and everything that is not a proxied endpoint: health, readiness, metrics, 404s. */
function createFrameworkApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  const exchangeOf = (res: Response): Exchange => res.locals.ex as Exchange;

  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/ready', (_req, res) => {
    if (deps.isDraining()) res.status(503).json({ status: 'draining' });
    else res.json({ status: 'ready' });
  });
  app.get('/metrics', (req, res, next) => {
    deps.metrics.scrape(req.headers.accept).then(({ contentType, text }) => {
      res.setHeader('content-type', contentType);
      res.setHeader('vary', 'accept');
      res.end(text);
    }, next);
  });
  app.use('/v1', (_req, res, next) => {
    if (authenticated(exchangeOf(res), deps.apiKeys)) next();
  });
  app.use(guardrailRoutes(deps.guardrails, deps.bodyLimitBytes));
  app.use(promptRoutes(deps.prompts, deps.bodyLimitBytes));
  app.use(policyRoutes(deps.policies, deps.bodyLimitBytes));
  app.use(logRoutes(new LogsService(deps.requestLogs)));
  if (deps.responses) app.use(responseRoutes(deps.responses));
  app.use(apiKeyRoutes(deps.adminKeys, deps.bodyLimitBytes));
  app.use(virtualKeyRoutes(deps.virtualKeys, deps.bodyLimitBytes));
  app.use((req, res) => {
    sendError(exchangeOf(res), new GatewayError('route_not_found', `Unknown route: ${req.method} ${req.path}`));
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    sendError(exchangeOf(res), err);
  });
  return app;
}

/**
 * The request handler. The proxied endpoints, the hot path, are dispatched directly on plain Node
 * objects (a table lookup on method and path, then a short list of path patterns): express
 * costs more CPU per request than the whole proxying work (the `throughput` scenario sets the
 * gateway beside a minimal Node proxy), so it serves only the
 * operational routes and the 404s. `routes` adds hot routes beside the proxied ones (their handlers
 * get the path parameters).
 */
export function createHandler(deps: AppDeps, routes: readonly HotRoute[] = []): (req: IncomingMessage, res: ServerResponse) => void {
  const app = createFrameworkApp(deps);
  const hot = new Router<(ex: Exchange, params: Params) => void>();
  const runner = new RequestRunner(new PlanRunner(deps.pipeline), deps.stages);
  const run = (ctx: RequestContext) => runner.run(ctx);
  for (const r of ingressRoutes(INGRESS, deps, run)) hot.add(r.method, r.path, r.handle);
  for (const r of routes) hot.add(r.method, r.path, r.handle);
  const now = deps.pipeline.now;
  const out = {
    requestLog: requestLogWriter(deps.logger),
    record: (ex: Exchange, latencyMs: number) => deps.requestLogs.append(requestRecord(ex, latencyMs, now())),
    telemetry: deps.pipeline.telemetry,
    now,
  };
  return (req, res) => {
    const ex = new Exchange(req, res, out, deps.isDraining());
    if (ex.startError !== undefined) {
      sendError(ex, ex.startError);
      return;
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const route = hot.match(req.method!, path);
    if (route !== undefined) {
      ex.recorded = true;
      route.handler(ex, route.params); // the route authenticates first
      return;
    }
    const methods = hot.allowed(path);
    if (methods !== undefined) {
      // A hot path asked with another method: 405 (after the key check, as /v1's 404s are).
      if (authenticated(ex, deps.apiKeys)) {
        sendError(ex, new GatewayError('method_not_allowed', `${req.method} is not allowed on ${path}; use ${methods}.`, { headers: { allow: methods } }));
      }
      return;
    }
    (res as unknown as { locals?: Record<string, unknown> }).locals = { ex };
    app(req as Request, res as Response);
  };
}
