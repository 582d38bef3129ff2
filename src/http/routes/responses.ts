import express, { type Request, type Response } from 'express';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ResponsesService } from '../../management/responses.js';
import type { Exchange } from '../exchange.js';

const keyOf = (res: Response) => (res.locals.ex as Exchange).gatewayKey;
const notAllowed =
  (allow: string) =>
  (req: Request): never => {
    throw new GatewayError('method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allow}.`, { headers: { allow } });
  };

/**
 * GET and DELETE /v1/responses/:id, GET /v1/responses/:id/input_items, POST /v1/responses/:id/cancel
 * (docs/stored-responses.md).
 * Mounted after the /v1 key check; errors go to the app's error handler.
 */
export function responseRoutes(service: ResponsesService): express.Router {
  const r = express.Router();
  r.route('/v1/responses/:id')
    .get(async (req: Request<{ id: string }>, res: Response) => {
      res.json(await service.get(req.params.id, req.query, keyOf(res)));
    })
    .delete(async (req: Request<{ id: string }>, res: Response) => {
      res.json(await service.delete(req.params.id, keyOf(res)));
    })
    .all(notAllowed('GET, DELETE'));
  r.route('/v1/responses/:id/input_items')
    .get(async (req: Request<{ id: string }>, res: Response) => {
      res.json(await service.inputItems(req.params.id, req.query, keyOf(res)));
    })
    .all(notAllowed('GET'));
  r.route('/v1/responses/:id/cancel')
    .post(async (req: Request<{ id: string }>, res: Response) => {
      res.json(await service.cancel(req.params.id, keyOf(res)));
    })
    .all(notAllowed('POST'));
  return r;
}
