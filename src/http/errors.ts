import type { ServerResponse } from 'node:http';
import { GatewayError, toGatewayError } from '../errors/gateway-error.js';
import type { Exchange } from './exchange.js';

/** express / body-parser errors (on the framework routes) → catalog codes. */
function fromExpressError(err: unknown): GatewayError | undefined {
  const e = err as { type?: string; status?: number; limit?: number };
  switch (e?.type) {
    case 'entity.too.large':
      return new GatewayError('body_too_large', `The request body is larger than the limit of ${e.limit} bytes.`);
    case 'entity.parse.failed':
      return new GatewayError('invalid_json');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new GatewayError('unsupported_media_type', 'The request body must be UTF-8 JSON.');
    case 'request.aborted':
    case 'request.size.invalid':
      return new GatewayError('invalid_request_body', 'The request body ended before its declared length.');
    default:
      return undefined;
  }
}

export function normalizeError(err: unknown): GatewayError {
  return fromExpressError(err) ?? toGatewayError(err);
}

/** The one place where an error becomes an HTTP response. */
export function sendError(ex: Exchange, err: unknown): GatewayError {
  const ge = normalizeError(err);
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
