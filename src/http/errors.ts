import type { ServerResponse } from 'node:http';
import { GatewayError, toGatewayError } from '../errors/gateway-error.js';
import { TargetCannotServe } from '../errors/cannot-serve.js';
import type { AnswerMeta } from '../upstream/events.js';
import { redactUrls } from '../security/redact.js';
import type { Exchange } from './exchange.js';

/**
 * An error from the pipeline says what was tried, as an answer does: the target that failed last
 * (`x-gateway-provider`, `x-gateway-target`, `x-gateway-retry-attempt-count`; absent when no target
 * was tried, e.g. a loadbalance whose every circuit is open) and the cache lookup's result
 * (`x-gateway-cache-status`, DISABLED when no cache ran). Errors before the pipeline (key, headers,
 * config, body) carry none of them: nothing was looked up or tried.
 */
function setTriedHeaders(ex: Exchange, res: ServerResponse, err: GatewayError): void {
  const outcome = ex.ctx!.outcome;
  // A refusal in translation names the target that refused (none when several did: the message
  // names them); any other error, the target whose attempt failed last.
  const failed: AnswerMeta | undefined = err instanceof TargetCannotServe ? err.refusingTarget : outcome.failed;
  if (failed) {
    ex.meta = outcome.cacheStatus === undefined ? failed : { ...failed, cacheStatus: outcome.cacheStatus };
    res.setHeader('x-gateway-provider', failed.provider);
    res.setHeader('x-gateway-target', failed.target);
    res.setHeader('x-gateway-retry-attempt-count', String(failed.retries));
    if (failed.paramsMapped !== undefined) res.setHeader('x-gateway-params-mapped', failed.paramsMapped);
  }
  res.setHeader('x-gateway-cache-status', outcome.cacheStatus ?? 'DISABLED');
}

/**
 * What a client and the logs are told of `err`: a GatewayError whose message has no URL userinfo
 * (redacted once, here: the body, the request log line and the record all read it).
 */
export function clientError(err: unknown): GatewayError {
  const ge = toGatewayError(err);
  ge.message = redactUrls(ge.message);
  return ge;
}


/**
 * Statuses whose answer no retry of the same request can change: the request, its key or its route is
 * what is wrong (400, 401, 403, 404, 405, 413, 415), a usage limit stays exhausted until its period
 * resets (412), a hook denies the same input again (446). These answers carry `x-should-retry: false`,
 * which the `openai` SDKs read before their own status rules. 408, 409 (a provider's may be a lock
 * that clears), 429 and 5xx say nothing, so clients keep their own policy. An error that a retry can
 * change sets `x-should-retry` in its own headers (a provider's is passed on there), which are
 * written after this default and win.
 */
const FINAL_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 405, 412, 413, 415, 446]);

/** The one place where an error becomes an HTTP response. */
export function sendError(ex: Exchange, err: unknown): GatewayError {
  const ge = clientError(err);
  ex.error = ge;
  const res: ServerResponse = ex.res;
  if (res.headersSent) {
    res.destroy();
    return ge;
  }
  if (ex.ctx) setTriedHeaders(ex, res, ge);
  if (FINAL_STATUSES.has(ge.status)) res.setHeader('x-should-retry', 'false');
  if (ge.headers) for (const k in ge.headers) res.setHeader(k, ge.headers[k]!);
  res.statusCode = ge.status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(ex.framing.errorBody(ge, ex.traceId)));
  return ge;
}
