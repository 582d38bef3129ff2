import type { ServerResponse } from 'node:http';
import type { Observable, Subscription } from 'rxjs';
import type { Exchange } from './exchange.js';
import { toGatewayError } from '../errors/gateway-error.js';
import { sendError } from './errors.js';
import type { AnswerMeta, GatewayEvent } from '../pipeline/events.js';
import type { RequestContext } from '../pipeline/context.js';
import { SSE_DONE, SSE_HEADERS, sseData, sseError } from '../upstream/sse-encode.js';

function setAnswerHeaders(ex: Exchange, res: ServerResponse, meta: AnswerMeta): void {
  ex.meta = meta;
  res.setHeader('x-gateway-provider', meta.provider);
  res.setHeader('x-gateway-target', meta.target);
  res.setHeader('x-gateway-retry-attempt-count', String(meta.retries));
  res.setHeader('x-gateway-cache-status', meta.cacheStatus ?? 'DISABLED');
  if (meta.upstreamHeaders) for (const k in meta.upstreamHeaders) res.setHeader(k, meta.upstreamHeaders[k]!);
}

/**
 * Subscribe to the plan's events and write them: one JSON body, or SSE frames ending in
 * `data: [DONE]`. A client that goes away unsubscribes, which aborts every upstream call. A failure
 * after the stream started ends it with an SSE error event and no [DONE]; so does `ex.interrupt`.
 */
export function respond(events: Observable<GatewayEvent>, ex: Exchange, ctx: RequestContext): void {
  const res = ex.res;
  let sub: Subscription | undefined;
  let done = false;
  const onClose = (): void => {
    if (!done) {
      done = true;
      ex.clientAborted = true;
      sub?.unsubscribe();
    }
  };
  // Before the request log's own 'close' listener, so the log line sees client_aborted.
  res.prependListener('close', onClose);
  const fail = (err: unknown): void => {
    if (!res.headersSent) {
      sendError(ex, err);
      return;
    }
    const ge = toGatewayError(err);
    ex.error = ge;
    if (!res.writableEnded) res.end(sseError(ge.toBody(ctx.traceId)));
  };
  ex.interrupt = (err) => {
    if (done) return;
    done = true;
    sub?.unsubscribe();
    fail(err);
  };
  sub = events.subscribe({
    next(ev) {
      switch (ev.type) {
        case 'json':
          setAnswerHeaders(ex, res, ev.meta);
          if (ev.usage) ctx.usage = ev.usage;
          res.statusCode = ev.status;
          res.setHeader('content-type', 'application/json; charset=utf-8');
          res.end(ev.raw ?? JSON.stringify(ev.body));
          return;
        case 'stream-start':
          setAnswerHeaders(ex, res, ev.meta);
          res.writeHead(200, SSE_HEADERS);
          return;
        case 'chunk':
          if (ev.usage) ctx.usage = ev.usage;
          if (ev.data !== '') res.write(sseData(ev.data));
          return;
      }
    },
    error(err: unknown) {
      done = true;
      fail(err);
    },
    complete() {
      done = true;
      if (res.writableEnded) return;
      if (res.headersSent) res.end(SSE_DONE);
      else if (ex.req.method !== 'HEAD') {
        // A stream that ended before any content: still a well-formed, complete SSE answer.
        res.writeHead(200, SSE_HEADERS);
        res.end(SSE_DONE);
      }
    },
  });
}
