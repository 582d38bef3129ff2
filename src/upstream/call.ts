import { EventEmitter } from 'node:events';
import { Observable, type Subscriber } from 'rxjs';
import type { Dispatcher } from 'undici';
import { GatewayError } from '../errors/gateway-error.js';
import type { StreamEvent, StreamFraming, UpstreamRequest } from '../providers/types.js';
import { streamDecoder, type StreamDecoder } from './framing.js';
import { customHostRefusal } from '../security/host-guard.js';
import type { Flow } from './flow.js';
import { DEFAULT_UPSTREAM_LIMITS, upstreamTooLarge, type UpstreamLimits } from './limits.js';

export type UpstreamHeaders = Record<string, string | string[] | undefined>;

/** What an upstream call emits: one whole body, or stream events (of any framing) as they arrive. */
export type UpstreamMessage =
  | { type: 'body'; status: number; headers: UpstreamHeaders; text: string }
  | { type: 'event'; status: number; headers: UpstreamHeaders; event: StreamEvent };

export type ErrorMapper = (status: number, text: string, headers: UpstreamHeaders) => Error;

/** undici's own limits (--upstream-timeout to the response headers, --stream-idle-timeout between body bytes). */
const UNDICI_TIMEOUTS: Readonly<Record<string, string>> = {
  UND_ERR_HEADERS_TIMEOUT: 'The provider sent no response headers in time',
  UND_ERR_BODY_TIMEOUT: 'The provider stopped sending its answer',
};

function transportError(err: unknown): Error {
  const refused = customHostRefusal(err);
  if (refused) return refused;
  const e = err as { code?: string };
  const timedOut = e?.code === undefined ? undefined : UNDICI_TIMEOUTS[e.code];
  if (timedOut) return new GatewayError('upstream_timeout', `${timedOut} (${e.code}); the call was aborted.`, { cause: err });
  // No socket error code in the message: for a client-chosen host it would tell a closed port from an
  // open one. The code stays in `cause`, for the log.
  return new GatewayError('upstream_unreachable', 'The provider could not be reached.', { cause: err });
}

/**
 * Cancels one undici request. undici accepts an EventEmitter as `signal`; it costs a fraction of an
 * AbortController (whose EventTarget is slow to build), and one is made per upstream call.
 */
class Abort extends EventEmitter {
  aborted = false;
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

type Body = Dispatcher.ResponseData['body'];

/** One call's state, shared by the reader of its body and its teardown. */
interface Call {
  readonly ac: Abort;
  readonly subscriber: Subscriber<UpstreamMessage>;
  /** The body was read to its end or the call failed: unsubscribing then aborts nothing. */
  finished: boolean;
  /** Detaches the body from the flow, once attached. */
  detach?: () => void;
}

/**
 * A stream's body → its decoder, attached to `flow` for backpressure. A decoder throws on bytes its
 * framing cannot read (a binary frame with a bad CRC): the call ends with that error and the rest of
 * the body is discarded.
 */
function readStream(call: Call, body: Body, decoder: StreamDecoder, flow: Flow | undefined): void {
  const { ac, subscriber } = call;
  const fail = (err: unknown): void => {
    call.detach?.();
    call.finished = true;
    ac.abort();
    subscriber.error(err);
  };
  body.on('data', (b: Buffer) => {
    if (call.finished) return;
    try {
      decoder.write(b);
    } catch (err) {
      fail(err);
    }
  });
  if (flow) call.detach = flow.attach(body);
  body.on('end', () => {
    if (call.finished) return;
    call.detach?.();
    call.finished = true;
    try {
      decoder.end();
    } catch (err) {
      subscriber.error(err);
      return;
    }
    subscriber.complete();
  });
  body.on('error', (err) => {
    call.detach?.();
    call.finished = true;
    if (!ac.aborted) subscriber.error(new GatewayError('stream_interrupted', undefined, { cause: err }));
  });
}

/** A body read whole, up to `maxBody` bytes (past it the call is aborted), then handed to `done` as text. */
function readWhole(call: Call, body: Body, maxBody: number, done: (text: string) => void): void {
  const { ac, subscriber } = call;
  let parts: Buffer[] = [];
  let size = 0;
  body.on('data', (b: Buffer) => {
    if (call.finished) return;
    size += b.length;
    if (size > maxBody) {
      call.finished = true;
      parts = [];
      ac.abort();
      subscriber.error(upstreamTooLarge('answer body', maxBody));
      return;
    }
    parts.push(b);
  });
  body.on('end', () => {
    if (call.finished) return;
    call.finished = true;
    done(parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts).toString('utf8'));
  });
  body.on('error', (err) => {
    call.finished = true;
    if (!ac.aborted) subscriber.error(transportError(err));
  });
}

/**
 * One HTTP call to a provider as a cold Observable, through `dispatcher`: the gateway's egress
 * dispatcher (src/security/egress.ts), whose connector applies the host guard to every connection. Subscribing sends the request; unsubscribing
 * aborts it (the socket's request is cancelled and its body discarded). Non-2xx answers become the
 * error produced by `mapError`; transport failures become `upstream_unreachable`. A stream's body is
 * decoded by the descriptor's framing and attached to `flow`: while the client cannot take more, the
 * body is paused, undici stops reading the socket and TCP pushes back to the provider. `limits` caps
 * what is read (limits.ts): past a cap the call is aborted with 502 upstream_response_too_large.
 */
export function callUpstream(
  dispatcher: Dispatcher,
  req: UpstreamRequest,
  mapError: ErrorMapper,
  framing: StreamFraming = 'sse',
  flow?: Flow,
  limits: UpstreamLimits = DEFAULT_UPSTREAM_LIMITS,
): Observable<UpstreamMessage> {
  // A source, not an operator: it is fed by undici's request promise and its body's events, and aborts the call on unsubscribe.
  return new Observable<UpstreamMessage>((subscriber) => {
    const call: Call = { ac: new Abort(), subscriber, finished: false };
    const { origin, path, method, body } = req;
    dispatcher.request({ origin, path, method, headers: req.headers, body, signal: call.ac }).then(
      ({ statusCode: status, headers, body: answer }) => {
        if (call.ac.aborted) return;
        const ok = status >= 200 && status < 300;
        const onEvent = (event: StreamEvent): void => {
          if (!subscriber.closed) subscriber.next({ type: 'event', status, headers, event });
        };
        const decoder = ok && req.stream ? streamDecoder(framing, headers, onEvent, limits.maxEvent) : undefined;
        if (decoder) return readStream(call, answer, decoder, flow);
        readWhole(call, answer, limits.maxBody, (text) => {
          if (!ok) return subscriber.error(mapError(status, text, headers));
          subscriber.next({ type: 'body', status, headers, text });
          subscriber.complete();
        });
      },
      (err: unknown) => {
        call.finished = true;
        if (!call.ac.aborted) subscriber.error(transportError(err));
      },
    );
    return () => {
      call.detach?.();
      if (!call.finished) call.ac.abort();
    };
  });
}
