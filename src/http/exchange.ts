import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { headerValue, REQUEST_HEADERS, requestSettings, type RequestSettings } from '../config/headers.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { Telemetry } from '../metrics/telemetry.js';
import type { RequestSpan } from '../metrics/tracing.js';
import { requestEnd } from './trace-end.js';
import type { RequestContext } from '../pipeline/context.js';
import type { PromptUse } from '../pipeline/prompt.js';
import type { AnswerMeta } from '../upstream/events.js';
import type { RequestLogWriter } from './request-log.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import { OPENAI_FRAMING, type Framing } from '../ingress/index.js';

/**
 * One request/response exchange and what the gateway learns about it on the way: trace id, settings,
 * key, the parsed request (its context, and its outcome there), the answering target, the error. Plain Node objects, so the hot routes need
 * no framework; the log line (src/http/request-log.ts reads its fields from here), the request's
 * record (src/http/request-record.ts) and gateway-wide metrics are written once, when the response closes.
 */
/** Where a response keeps its exchange (the shutdown deadline finds in-flight ones from their sockets). */
const EXCHANGE = Symbol('sluice.exchange');

/** The exchange a response belongs to, if the gateway made one. */
export function exchangeOf(res: unknown): Exchange | undefined {
  return res ? (res as Record<symbol, Exchange | undefined>)[EXCHANGE] : undefined;
}

export class Exchange {
  traceId: string;
  settings: RequestSettings = {};
  gatewayKey: ApiKeyRecord | undefined;
  /**
   * The request's headers as the pipeline sees them: `req.headers`, or a copy without Authorization
   * when that header carried the gateway key (http/deps.ts `authenticate`).
   */
  headers: IncomingMessage['headers'];
  ctx: RequestContext | undefined;
  /** How this exchange's answer and errors are written: its front door's (OpenAI's until a route says). */
  framing: Framing = OPENAI_FRAMING;
  /** The prompt template version that rendered the request (set by the renderer), for its log line and record. */
  prompt: PromptUse | undefined = undefined;
  meta: AnswerMeta | undefined;
  error: GatewayError | undefined;
  clientAborted = false;
  /** Set for the proxied endpoints: the exchange's record goes to the request log store when it closes. */
  recorded = false;
  /**
   * The answer's subscription while the responder writes it (see `interruptExchange`, used at the
   * shutdown deadline). A field, not a per-request closure, and the exchange is reachable only from
   * its own request's objects: a long-lived Set of in-flight exchanges with a closure on each kept every
   * request's objects alive long enough to be promoted to the old generation, which the `throughput`
   * scenario shows as garbage-collection time per request.
   */
  subscription: { unsubscribe(): void } | undefined;
  /** The request's span when tracing is on (started by parseRequest); ended with the response. */
  span: RequestSpan | undefined = undefined;
  /** Ended early by `interruptExchange` (not by the client). */
  interrupted = false;
  /** The stream events written so far (comments aside): an error event after them is numbered next. */
  streamEvents = 0;
  /** Set when reading the headers failed: the response to send instead of running the route. */
  readonly startError: unknown;
  private readonly start = performance.now();

  /** When the exchange began, in epoch ms (a span's start). */
  get startedAtMs(): number {
    return performance.timeOrigin + this.start;
  }

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    private readonly out: {
      requestLog: RequestLogWriter;
      /** Appends the exchange's record (GET /v1/logs); never throws or waits. */
      record: (ex: Exchange, latencyMs: number) => void;
      telemetry: Telemetry;
      now: () => number;
    },
    draining: boolean,
  ) {
    this.headers = req.headers;
    let traceId = headerValue(req.headers, REQUEST_HEADERS.traceId);
    try {
      this.settings = requestSettings(req.headers);
    } catch (e) {
      this.startError = e;
      if ((e as GatewayError).param === REQUEST_HEADERS.traceId) traceId = undefined;
    }
    this.traceId = traceId ?? randomUUID();
    res.setHeader('x-gateway-trace-id', this.traceId);
    if (draining) res.setHeader('connection', 'close');
    (res as unknown as Record<symbol, Exchange>)[EXCHANGE] = this;
    res.on('close', () => this.finish());
  }

  private finish(): void {
    const { res, ctx } = this;
    const latencyMs = performance.now() - this.start;
    if (ctx) {
      const now = this.out.now();
      const upstreamMs = ctx.outcome.upstreamWaitMs(now);
      this.out.telemetry.request(ctx.request.endpoint, res.statusCode, latencyMs / 1000, (latencyMs - upstreamMs) / 1000, this.traceId);
    }
    this.out.requestLog(this, latencyMs);
    if (this.recorded) this.out.record(this, latencyMs);
    if (this.span) {
      try {
        this.span.end(requestEnd(this));
      } catch {
        // a tracing failure never fails the exchange's bookkeeping
      }
    }
  }
}
