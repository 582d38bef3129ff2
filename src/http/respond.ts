import type { ServerResponse } from 'node:http';
import type { Observable, Subscription } from 'rxjs';
import type { Exchange } from './exchange.js';
import { GatewayError, toGatewayError } from '../errors/gateway-error.js';
import { sendError } from './errors.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';
import type { Flow } from '../upstream/flow.js';
import { SSE_DONE, SSE_HEADERS, sseComment, sseData, sseError } from '../upstream/sse-encode.js';

function setAnswerHeaders(ex: Exchange, res: ServerResponse, meta: AnswerMeta): void {
  ex.meta = meta;
  res.setHeader('x-gateway-provider', meta.provider);
  res.setHeader('x-gateway-target', meta.target);
  res.setHeader('x-gateway-retry-attempt-count', String(meta.retries));
  res.setHeader('x-gateway-cache-status', meta.cacheStatus ?? 'DISABLED');
  if (meta.upstreamHeaders) for (const k in meta.upstreamHeaders) res.setHeader(k, meta.upstreamHeaders[k]!);
}

/**
 * Subscribe to the request's events and write them: one JSON body, or SSE frames ending in
 * `data: [DONE]`. A client that goes away unsubscribes, which aborts every upstream call. A failure
 * after the stream started ends it with an SSE error event and no [DONE]; so does `ex.interrupt`
 * (the shutdown deadline). An error before any event (authentication, config, body, a refused
 * request) is a JSON error response.
 *
 * Backpressure: when the client's socket buffer is full (`write` returns false) the request's flow is
 * paused, which pauses the upstream body, until the socket drains. A client that takes nothing for
 * `stallMs` while paused is cut (the socket destroyed, the upstream aborted).
 */
export function respond(events: Observable<GatewayEvent>, ex: Exchange, stallMs: number): void {
  const res = ex.res;
  let sub: Subscription | undefined;
  let done = false;
  let stall: NodeJS.Timeout | undefined;
  /**
   * The answer is over: nothing may interrupt it any more. `ex.interrupt` is dropped then, not left
   * holding the subscription: an exchange outlives its response (a kept-alive socket keeps its last
   * one), and a closure reaching the whole pipeline from it got every request's objects promoted to
   * the old generation (measured: +45 µs of GC per request).
   */
  const finish = (): void => {
    done = true;
    ex.interrupt = undefined;
  };
  // The request's flow exists once the pipeline has made its context (a stream request only).
  const flowOf = (): Flow | undefined => ex.ctx?.flow;
  const onClose = (): void => {
    if (stall) clearTimeout(stall);
    flowOf()?.close();
    if (!done) {
      finish();
      ex.clientAborted = true;
      sub?.unsubscribe();
    }
    sub = undefined;
  };
  const onDrain = (): void => {
    if (stall) clearTimeout(stall);
    stall = undefined;
    flowOf()?.resume();
  };
  const onStall = (): void => {
    if (res.writableFinished) return;
    ex.error = new GatewayError('request_timeout', `The client read nothing for ${stallMs} ms; the stream was cut.`);
    if (!done) {
      finish();
      sub?.unsubscribe();
    }
    res.destroy();
  };
  /** The client's socket is full: hold the upstream back until it drains. */
  const hold = (): void => {
    const flow = flowOf();
    if (!flow || flow.held) return;
    flow.pause();
    res.once('drain', onDrain);
    stall = setTimeout(onStall, stallMs);
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
    if (!res.writableEnded) res.end(sseError(ge.toBody(ex.traceId)));
  };
  ex.interrupt = (err) => {
    if (done) return;
    finish();
    sub?.unsubscribe();
    fail(err);
  };
  sub = events.subscribe({
    next(ev) {
      switch (ev.type) {
        case 'json':
          setAnswerHeaders(ex, res, ev.meta);
          res.statusCode = ev.status;
          res.setHeader('content-type', 'application/json; charset=utf-8');
          res.end(ev.raw ?? JSON.stringify(ev.body));
          return;
        case 'stream-start':
          setAnswerHeaders(ex, res, ev.meta);
          res.writeHead(200, SSE_HEADERS);
          return;
        case 'chunk':
          if (ev.data !== '' && !res.write(ev.comment ? sseComment(ev.data) : sseData(ev.data))) hold();
          return;
      }
    },
    error(err: unknown) {
      finish();
      fail(err);
    },
    complete() {
      finish();
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
