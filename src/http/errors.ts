import type { ServerResponse } from 'node:http';
import { GatewayError, toGatewayError } from '../errors/gateway-error.js';
import type { Exchange } from './exchange.js';

/** The one place where an error becomes an HTTP response. */
export function sendError(ex: Exchange, err: unknown): GatewayError {
  const ge = toGatewayError(err);
  ex.error = ge;
  const res: ServerResponse = ex.res;
  if (res.headersSent) {
    res.destroy();
    return ge;
  }
  if (ge.headers) for (const k in ge.headers) res.setHeader(k, ge.headers[k]!);
  res.statusCode = ge.status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(ge.toBody(ex.traceId)));
  return ge;
}
