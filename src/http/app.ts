import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { requestSettings, headerValue, REQUEST_HEADERS } from '../config/headers.js';
import type { ConfigResolver } from '../config/resolve.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Logger } from '../log.js';
import type { PipelineDeps, RequestContext } from '../pipeline/context.js';
import type { Registry } from 'prom-client';
import type { AnswerMeta } from '../pipeline/events.js';
import type { ApiKeyStore } from '../security/api-keys.js';
import { sendError } from './errors.js';
import * as chatCompletions from './routes/chat-completions.js';
import * as completions from './routes/completions.js';
import * as embeddings from './routes/embeddings.js';
import * as models from './routes/models.js';

export interface AppDeps {
  resolver: ConfigResolver;
  pipeline: PipelineDeps;
  apiKeys: ApiKeyStore;
  logger: Logger;
  bodyLimitBytes: number;
  metrics: Registry;
  /** True once shutdown has begun: /ready answers 503 and connections are not kept alive. */
  isDraining: () => boolean;
}

const ROUTES = [chatCompletions, completions, embeddings, models];

/** Trace id, request settings and the one log line per request. */
function requestStart(deps: AppDeps) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    let traceId = headerValue(req.headers, REQUEST_HEADERS.traceId);
    let settingsError: unknown;
    try {
      res.locals.settings = requestSettings(req.headers);
    } catch (e) {
      settingsError = e;
      if ((e as GatewayError).param === REQUEST_HEADERS.traceId) traceId = undefined;
    }
    traceId ??= randomUUID();
    res.locals.traceId = traceId;
    res.setHeader('x-gateway-trace-id', traceId);
    if (deps.isDraining()) res.setHeader('connection', 'close');
    res.on('close', () => finishRequest(deps, req, res, start));
    if (settingsError) {
      sendError(res, settingsError, traceId);
      return;
    }
    next();
  };
}

function finishRequest(deps: AppDeps, req: Request, res: Response, start: bigint): void {
  const ctx = res.locals.ctx as RequestContext | undefined;
  const latencyMs = Number(process.hrtime.bigint() - start) / 1e6;
  if (ctx) {
    const now = deps.pipeline.now();
    const upstreamMs = ctx.upstreamMs + (ctx.upstreamActive > 0 ? now - ctx.upstreamSince : 0);
    deps.pipeline.telemetry.request(ctx.request.endpoint, res.statusCode, latencyMs / 1000, (latencyMs - upstreamMs) / 1000);
  }
  logRequest(deps.logger, req, res, latencyMs);
}

function logRequest(logger: Logger, req: Request, res: Response, latencyMs: number): void {
  const ctx = res.locals.ctx as RequestContext | undefined;
  const meta = res.locals.meta as AnswerMeta | undefined;
  const err = res.locals.error as GatewayError | undefined;
  const line: Record<string, unknown> = {
    msg: 'request',
    trace_id: res.locals.traceId,
    method: req.method,
    path: req.originalUrl.split('?', 1)[0],
    status: res.statusCode,
    latency_ms: latencyMs,
  };
  const settings = res.locals.settings as { metadata?: unknown } | undefined;
  if (settings?.metadata) line.metadata = settings.metadata;
  if (ctx) {
    line.stream = ctx.request.stream;
    line.attempts = ctx.attempts;
    if (ctx.usage) line.usage = ctx.usage;
  }
  if (meta) {
    line.provider = meta.provider;
    line.target = meta.target;
  }
  if (err) line.error = { code: err.code, status: err.status, message: err.message };
  if (res.locals.clientAborted) line.client_aborted = true;
  if (res.locals.gatewayKey) line.key_name = (res.locals.gatewayKey as { name: string }).name;
  logger.info(line);
}

function requireGatewayKey(store: ApiKeyStore) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const key = headerValue(req.headers, REQUEST_HEADERS.apiKey);
    if (!key) return void sendError(res, new GatewayError('missing_gateway_key'), res.locals.traceId);
    const record = store.verify(key);
    if (!record) return void sendError(res, new GatewayError('invalid_gateway_key'), res.locals.traceId);
    res.locals.gatewayKey = record;
    next();
  };
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  app.use(requestStart(deps));

  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/ready', (_req, res) => {
    if (deps.isDraining()) res.status(503).json({ status: 'draining' });
    else res.json({ status: 'ready' });
  });

  app.get('/metrics', (_req, res, next) => {
    deps.metrics.metrics().then((text) => {
      res.setHeader('content-type', deps.metrics.contentType);
      res.end(text);
    }, next);
  });

  const v1 = express.Router();
  v1.use(requireGatewayKey(deps.apiKeys));
  v1.use(express.json({ limit: deps.bodyLimitBytes, type: ['application/json', 'application/*+json'], strict: false }));
  for (const r of ROUTES) r.mount(v1, deps);
  app.use('/v1', v1);

  app.use((req, res) => {
    sendError(res, new GatewayError('route_not_found', `Unknown route: ${req.method} ${req.path}`), res.locals.traceId);
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    sendError(res, err, res.locals.traceId ?? randomUUID());
  });
  return app;
}
