import type { OperatorFunction } from 'rxjs';
import type { GatewayError } from '../errors/gateway-error.js';
import type { Endpoint, ProviderRequest } from '../providers/types.js';
import type { GatewayEvent } from '../upstream/events.js';

/** Path parameters by name, percent-decoded (`/v1/models/:id` → `{ id }`). */
export type Params = Readonly<Record<string, string>>;

/**
 * How a front door writes the gateway's canonical events back to its client: a JSON answer's body,
 * a stream's headers, frames and end, and an error's envelope (before the first byte, as a JSON body;
 * after it, as a frame that ends the stream). The response writer (src/http/respond.ts) and the error
 * writer (src/http/errors.ts) ask it; they know no wire format.
 */
export interface Framing {
  /** A JSON answer's body text. */
  json(ev: Extract<GatewayEvent, { type: 'json' }>): string;
  /** The headers of a stream answer. */
  readonly streamHeaders: Readonly<Record<string, string>>;
  /** One chunk of a stream (the event's JSON text; its event name, for formats whose streams name events). */
  chunk(data: string, event?: string): string;
  /** A line clients ignore (a stream's closing hook results). */
  comment(text: string): string;
  /** What ends a stream that completed. */
  readonly end: string;
  /** An error's envelope, as the client reads it (secrets redacted). */
  errorBody(ge: GatewayError, traceId: string): Record<string, unknown>;
  /** An error after the stream started (`sent` events before it): the frame that ends it. */
  streamError(body: Record<string, unknown>, sent: number): string;
}

/** One method + path a format is served on. */
export interface IngressRoute {
  method: 'GET' | 'POST';
  /** An exact path, or a pattern whose `:name` segments match one segment each (src/http/router.ts). */
  path: string;
  /** The path conditional routing sees (`url.pathname`); default `path`. */
  pathname?: string;
  /** Makes this route's answer from the pipeline's (with the path parameters). */
  answer?: (params: Params) => OperatorFunction<GatewayEvent, GatewayEvent>;
}

/**
 * A front door: a client-facing request format, as data plus pure functions (as a provider is). Its
 * routes; whether it has a JSON body and how that body is validated; its translation into the
 * canonical request every stage and provider reads; and its framing of the canonical events back.
 */
export interface IngressFormat {
  readonly id: string;
  /** The canonical endpoint its requests become. */
  readonly endpoint: Endpoint;
  readonly routes: readonly IngressRoute[];
  /**
   * A request header whose presence makes this format serve its routes in place of the format that
   * has the same routes without one (Anthropic's model list when `anthropic-version` is sent).
   */
  readonly selectedBy?: string;
  /** False: the request has no body to read (a GET). */
  readonly hasBody: boolean;
  /** The parsed JSON body (its prompt rendered) → the validated body; throws a 400 naming the field. */
  parse(raw: unknown): Record<string, unknown> | undefined;
  /** The validated body and the request's headers → the canonical request. */
  toRequest(body: Record<string, unknown> | undefined, headers: ProviderRequest['headers']): ProviderRequest;
  readonly framing: Framing;
}
