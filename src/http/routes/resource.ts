import express, { type Request, type Response } from 'express';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ApiKeyRecord } from '../../security/api-keys.js';
import { redact } from '../../security/redact.js';
import { readJsonBody } from '../body.js';
import type { Exchange } from '../exchange.js';

/** A management resource's logic (src/management/), called with the caller's gateway key. */
export interface ResourceService {
  create(body: unknown, key: ApiKeyRecord | undefined): Promise<unknown>;
  list(query: unknown, key: ApiKeyRecord | undefined): Promise<unknown>;
  get(id: string, query: unknown, key: ApiKeyRecord | undefined): Promise<unknown>;
  /** Absent: the resource is not changed in place (PUT is a 405). */
  update?(id: string, body: unknown, query: unknown, key: ApiKeyRecord | undefined): Promise<unknown>;
  delete(id: string, query: unknown, key: ApiKeyRecord | undefined): Promise<unknown>;
}

/** The JSON body (415 / 413 / 400 as for the proxied routes). */
function jsonBody(req: Request, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => readJsonBody(req, limit, (err, body) => (err ? reject(err) : resolve(body))));
}

function methodNotAllowed(allow: string) {
  return (req: Request): never => {
    throw new GatewayError('method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allow}.`, { headers: { allow } });
  };
}

/** Every management answer is redacted by kind on its way out (security/redact.ts): no service can forget it. */
const answer = (res: Response, body: unknown, status = 200): void => {
  res.status(status).json(redact(body));
};

/**
 * A management resource's routes: `POST` (201) and `GET` (list) on `base`, `GET`, `PUT` (when the
 * service updates) and `DELETE` on `base/:id`, other methods 405 with `Allow`. Parse, call the logic with the caller's key, answer
 * JSON; mounted after the /v1 key check, errors go to the app's error handler.
 */
export function resourceRoutes(base: string, service: ResourceService, bodyLimitBytes: number): express.Router {
  const r = express.Router();
  const key = (res: Response) => (res.locals.ex as Exchange).gatewayKey;
  const idOf = (req: Request) => req.params.id as string;

  r.route(base)
    .post(async (req, res) => {
      answer(res, await service.create(await jsonBody(req, bodyLimitBytes), key(res)), 201);
    })
    .get(async (req, res) => {
      answer(res, await service.list(req.query, key(res)));
    })
    .all(methodNotAllowed('GET, POST'));

  const one = r.route(`${base}/:id`).get(async (req, res) => {
    answer(res, await service.get(idOf(req), req.query, key(res)));
  });
  const update = service.update?.bind(service);
  if (update) {
    one.put(async (req, res) => {
      answer(res, await update(idOf(req), await jsonBody(req, bodyLimitBytes), req.query, key(res)));
    });
  }
  one
    .delete(async (req, res) => {
      answer(res, await service.delete(idOf(req), req.query, key(res)));
    })
    .all(methodNotAllowed(update ? 'GET, PUT, DELETE' : 'GET, DELETE'));

  return r;
}
