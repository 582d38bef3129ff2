import type { ServerResponse } from 'node:http';
import type { Observable, Subscription } from 'rxjs';
import type { Exchange } from './exchange.js';
import { GatewayError } from '../errors/gateway-error.js';
import { clientError, sendError } from './errors.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';
import type { Flow } from '../upstream/flow.js';
import { formatCost } from '../pricing/cost.js';

function setAnswerHeaders(ex: Exchange, res: ServerResponse, meta: AnswerMeta): void {
  ex.meta = meta;
  res.setHeader('x-gateway-provider', meta.provider);
  res.setHeader('x-gateway-target', meta.target);
  res.setHeader('x-gateway-retry-attempt-count', String(meta.retries));
  res.setHeader('x-gateway-cache-status', meta.cacheStatus ?? 'DISABLED');
  if (meta.paramsMapped !== undefined) res.setHeader('x-gateway-params-mapped', meta.paramsMapped);
  if (meta.upstreamHeaders) for (const k in meta.upstreamHeaders) res.setHeader(k, meta.upstreamHeaders[k]!);
}

/**
 * Subscribe to the request's events and write them as the exchange's front door frames them
 * (`ex.framing`, src/ingress/): one JSON body, or a stream's frames and its end (OpenAI's: SSE
 * `data:` frames ending in `data: [DONE]`). A client that goes away unsubscribes, which aborts every upstream call. A failure
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
  const framing = ex.framing;
  let sub: Subscription | undefined;
  let done = false;
  let stall: NodeJS.Timeout | undefined;
  const finish = (): void => {
    done = true;
    ex.subscription = undefined;
  };
  // The request's flow exists once the edge has parsed the request (a stream request only).
  const flowOf = (): Flow | undefined => ex.ctx?.flow;
  const onClose = (): void => {
    if (stall) clearTimeout(stall);
    flowOf()?.close();
    if (!done) {
      finish();
      if (!ex.interrupted) ex.clientAborted = true;
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
    if (ex.interrupted) return;
    endWithError(ex, err);
  };
  const subscription = events.subscribe({
    next(ev) {
      switch (ev.type) {
        case 'json': {
          setAnswerHeaders(ex, res, ev.meta);
          // The request's cost (USD), priced before the answer reached here; a stream's headers go
          // before its usage is known, so only JSON answers carry it.
          const cost = ex.ctx?.outcome.cost;
          if (cost !== undefined) res.setHeader('x-gateway-cost', formatCost(cost));
          res.statusCode = ev.status;
          res.setHeader('content-type', 'application/json; charset=utf-8');
          res.end(framing.json(ev));
          return;
        }
        case 'stream-start':
          setAnswerHeaders(ex, res, ev.meta);
          res.writeHead(200, framing.streamHeaders);
          return;
        case 'chunk':
          if (ev.data !== '' && !res.write(ev.comment ? framing.comment(ev.data) : framing.chunk(ev.data, ev.event))) hold();
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
      if (res.headersSent) res.end(framing.end);
      else if (ex.req.method !== 'HEAD') {
        // A stream that ended before any content: still a well-formed, complete SSE answer.
        res.writeHead(200, framing.streamHeaders);
        res.end(framing.end);
      }
    },
  });
  if (!done) {
    sub = subscription;
    ex.subscription = subscription;
  }
}

/** An error as the answer: JSON when nothing was sent yet, else an SSE error event ending the stream. */
function endWithError(ex: Exchange, err: unknown): void {
  const res = ex.res;
  if (!res.headersSent) {
    sendError(ex, err);
    return;
  }
  const ge = clientError(err);
  ex.error = ge;
  if (!res.writableEnded) res.end(ex.framing.streamError(ex.framing.errorBody(ge, ex.traceId)));
}

/**
 * Ends an exchange early with `err` (the shutdown deadline): its answer's subscription is dropped
 * (aborting the upstream call) and the client gets the error as JSON, or as an SSE error event on a
 * started stream. An exchange not answering a plan (reading its body, an ops route) gets the JSON.
 */
export function interruptExchange(ex: Exchange, err: GatewayError): void {
  if (ex.res.writableEnded || ex.interrupted) return;
  ex.interrupted = true;
  const sub = ex.subscription;
  ex.subscription = undefined;
  sub?.unsubscribe();
  endWithError(ex, err);
}
