import type { ServerResponse } from 'node:http';
import type { Observable, Subscription } from 'rxjs';
import type { Exchange } from './exchange.js';
import { GatewayError } from '../errors/gateway-error.js';
import { clientError, sendError } from './errors.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';
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

/** A JSON answer: its headers (the request's cost among them), its status, its body as the front door frames it. */
function writeJson(ex: Exchange, ev: Extract<GatewayEvent, { type: 'json' }>): void {
  const res = ex.res;
  setAnswerHeaders(ex, res, ev.meta);
  // The request's cost (USD), priced before the answer reached here; a stream's headers go before
  // its usage is known, so only JSON answers carry it.
  const cost = ex.ctx?.outcome.cost;
  if (cost !== undefined) res.setHeader('x-gateway-cost', formatCost(cost));
  res.statusCode = ev.status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(ex.framing.json(ev));
}

/** The answer's events are over: a stream's end frame (a stream that ended before any content is still a well-formed, complete one). */
function endAnswer(ex: Exchange): void {
  const res = ex.res;
  if (res.writableEnded) return;
  if (res.headersSent) res.end(ex.framing.end);
  else if (ex.req.method !== 'HEAD') {
    res.writeHead(200, ex.framing.streamHeaders);
    res.end(ex.framing.end);
  }
}

/**
 * One answer being written to its client: its events as the exchange's front door frames them
 * (`ex.framing`, src/ingress/), its end, and the client's backpressure. One object per request, the
 * answer's observer itself; the drain listener and the stall timer exist only while the client's
 * socket is full.
 */
class Writer {
  private sub: Subscription | undefined;
  private done = false;
  private stall: NodeJS.Timeout | undefined;

  constructor(
    private readonly ex: Exchange,
    private readonly stallMs: number,
  ) {}

  /** Subscribes to `events`; the client leaving (the response's 'close') unsubscribes. */
  start(events: Observable<GatewayEvent>): void {
    const ex = this.ex;
    // Before the request log's own 'close' listener, so the log line sees client_aborted.
    ex.res.prependListener('close', () => this.closed());
    const subscription = events.subscribe(this);
    if (!this.done) {
      this.sub = subscription;
      ex.subscription = subscription;
    }
  }

  next(ev: GatewayEvent): void {
    const { ex } = this;
    switch (ev.type) {
      case 'json':
        writeJson(ex, ev);
        return;
      case 'stream-start':
        setAnswerHeaders(ex, ex.res, ev.meta);
        ex.res.writeHead(200, ex.framing.streamHeaders);
        return;
      case 'chunk':
        if (ev.data === '') return;
        if (!ev.comment) ex.streamEvents++;
        if (!ex.res.write(ev.comment ? ex.framing.comment(ev.data) : ex.framing.chunk(ev.data, ev.event))) this.hold();
        return;
    }
  }

  error(err: unknown): void {
    this.finish();
    if (!this.ex.interrupted) endWithError(this.ex, err);
  }

  complete(): void {
    this.finish();
    endAnswer(this.ex);
  }

  private finish(): void {
    this.done = true;
    this.ex.subscription = undefined;
  }

  /** The response closed: the client left (unless the answer was over or interrupted), or it was answered. */
  private closed(): void {
    const ex = this.ex;
    if (this.stall) clearTimeout(this.stall);
    ex.ctx?.flow?.close();
    if (!this.done) {
      this.finish();
      if (!ex.interrupted) ex.clientAborted = true;
      this.sub?.unsubscribe();
    }
    this.sub = undefined;
  }

  /** The client's socket is full: hold the upstream back until it drains, for at most `stallMs`. */
  private hold(): void {
    // The request's flow exists once the edge has parsed the request (a stream request only).
    const flow = this.ex.ctx?.flow;
    if (!flow || flow.held) return;
    flow.pause();
    this.ex.res.once('drain', () => this.drained());
    this.stall = setTimeout(() => this.stalled(), this.stallMs);
  }

  private drained(): void {
    if (this.stall) clearTimeout(this.stall);
    this.stall = undefined;
    this.ex.ctx?.flow?.resume();
  }

  /** The client took nothing for `stallMs`: the socket is destroyed, the upstream aborted. */
  private stalled(): void {
    const { ex } = this;
    if (ex.res.writableFinished) return;
    ex.error = new GatewayError('request_timeout', `The client read nothing for ${this.stallMs} ms; the stream was cut.`);
    if (!this.done) {
      this.finish();
      this.sub?.unsubscribe();
    }
    ex.res.destroy();
  }
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
  new Writer(ex, stallMs).start(events);
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
  if (!res.writableEnded) res.end(ex.framing.streamError(ex.framing.errorBody(ge, ex.traceId), ex.streamEvents));
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
