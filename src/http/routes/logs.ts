import express, { type Request, type Response } from 'express';
import { GatewayError } from '../../errors/gateway-error.js';
import type { LogsService } from '../../management/logs.js';
import { redact } from '../../security/redact.js';
import type { Exchange } from '../exchange.js';

/**
 * GET /v1/logs (docs/request-logs.md): the request records visible to the caller's key, filtered and
 * paged. Mounted after the /v1 key check; errors go to the app's error handler.
 */
export function logRoutes(service: LogsService): express.Router {
  const r = express.Router();
  r.route('/v1/logs')
    .get(async (req: Request, res: Response) => {
      res.json(redact(await service.query(req.query, (res.locals.ex as Exchange).gatewayKey)));
    })
    .all((req: Request): never => {
      throw new GatewayError('method_not_allowed', `${req.method} is not allowed on ${req.path}; use GET.`, { headers: { allow: 'GET' } });
    });
  return r;
}
