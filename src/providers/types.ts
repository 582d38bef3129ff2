import type { GatewayError } from '../errors/gateway-error.js';
import type { ProviderFields } from '../config/provider-fields.js';
import type { ParamRange } from './ranges.js';

// The endpoints and the usage shape are facts of the OpenAI wire the gateway speaks: defined low
// (config/wire.ts) so metrics and config can use them too.
import type { Endpoint, Usage } from '../config/wire.js';
export type { Endpoint, Usage };

/** Where and with what a target is reached: credentials and host, after virtual keys are resolved. */
export interface Target {
  /** Canonical provider id from the registry, e.g. "openai". */
  provider: string;
  api_key?: string;
  custom_host?: string;
  vendor_organization?: string;
  vendor_project?: string;
  /** Every other provider field of the config (cloud_*, resource_name, ...), kept for providers that need them. */
  extra?: Record<string, unknown>;
}

/** The request as the provider layer sees it: already validated, overrides applied. */
export interface ProviderRequest {
  endpoint: Endpoint;
  body: Record<string, unknown> | undefined;
  stream: boolean;
  /** Incoming request headers, lower-case names (for forward_headers). */
  headers: Record<string, string | string[] | undefined>;
  forwardHeaders?: readonly string[];
}

/** What the upstream layer sends. */
export interface UpstreamRequest {
  origin: string;
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  stream: boolean;
}

/**
 * One message of an upstream stream, whatever its framing: an SSE event (`event:` and the joined
 * `data:` lines), or, for a binary framing, the frame's event type and its payload as text.
 */
export interface StreamEvent {
  event?: string;
  data: string;
}
/** The SSE case of a stream event (the same shape). */
export type SseEvent = StreamEvent;

/**
 * How a provider frames a streamed answer; src/upstream/framing.ts has one decoder per value.
 * Adding one (AWS event-stream) is a decoder file there, its entry, and this union.
 */
export type StreamFraming = 'sse' | 'aws-event-stream';

/** What a provider's async `prepare` step may use; the clock is handed in, never read. */
export interface PrepareContext {
  /** Milliseconds since the epoch (the pipeline's clock; a test's virtual one). */
  now: () => number;
  /** Aborted when the attempt is abandoned (client left, timeout, another target won). */
  signal: AbortSignal;
  /** For token endpoints, when the composition root provides one. */
  fetch?: typeof fetch;
}

/** One chunk for the client: the JSON text to put after `data: `, and usage when it carried some. */
export interface StreamChunk {
  data: string;
  usage?: Usage;
  /** The SSE event name the client's framing writes before it, for formats whose streams name events. */
  event?: string;
}

export interface StreamStep<S> {
  state: S;
  chunks: StreamChunk[];
  done?: boolean;
}

export interface JsonResult {
  /** The body to return; `raw` is sent verbatim when set (no re-serialisation). */
  body: unknown;
  raw?: string;
  usage?: Usage;
}

/** Static facts about a provider: pure data. */
export interface ProviderDescriptor {
  id: string;
  /** Other accepted names. */
  aliases?: readonly string[];
  /** Default base URL (with version prefix). Absent: custom_host is required. */
  baseUrl?: string;
  /** Path per endpoint below the base URL; an endpoint not listed is not served. */
  paths: Partial<Record<Endpoint, string>>;
  /**
   * For an endpoint listed here, the models whose requests the provider serves itself (by their
   * `model`); any other model of that endpoint goes through its chat bridge (Claude on a cloud that
   * also hosts other families). Absent: every model of a listed path.
   */
  nativeModels?: Partial<Record<Endpoint, RegExp>>;
  auth: { header: string; scheme?: 'Bearer' };
  /** Fixed headers every request carries (an API version header such as `anthropic-version`); lower-case names; forward_headers cannot replace them. */
  extraHeaders?: Readonly<Record<string, string>>;
  /** Ask for a usage chunk on streams (and hide it when the client did not ask). */
  injectStreamUsage?: boolean;
  /**
   * The target fields this provider accepts: the field groups it names and their one zod schema,
   * secrets marked (src/config/provider-fields.ts). A field outside them is detectable
   * (`fieldsNotAccepted`).
   */
  fields: ProviderFields;
  /** How its streamed answers are framed; absent: `sse`. */
  framing?: StreamFraming;
  /**
   * The target field naming the region its hosts are built from (`{region}` in a base URL or a
   * custom_host), the form a region must have, and the default when the field is absent.
   */
  region?: { field: string; pattern: RegExp; example: string; default?: string };
  /**
   * Parameter ranges narrower than OpenAI's (which the edge validates): a value outside is clamped
   * into the range before translation, and said (src/providers/ranges.ts). Absent: sent as given.
   */
  ranges?: readonly ParamRange[];
}

/** A provider: its descriptor and the pure functions that translate to and from its wire format. */
export interface Provider<S = unknown> {
  descriptor: ProviderDescriptor;
  toProvider(req: ProviderRequest, target: Target, baseUrl: string): UpstreamRequest;
  /**
   * Optional async step between building the request and sending it: sign it (with the clock),
   * fetch or refresh a token. Absent: the request is sent as built (the identity). Runs inside the
   * attempt's timeout; `ctx.signal` aborts when the attempt is abandoned. Rejects with a GatewayError.
   */
  prepare?(request: UpstreamRequest, target: Target, ctx: PrepareContext): Promise<UpstreamRequest>;
  /** `target` is the target that answered (for providers whose answer depends on its fields). */
  fromJson(req: ProviderRequest, text: string, target?: Target): JsonResult;
  /** `req`: the request as this target sent it (for providers whose error depends on its format). */
  fromError(status: number, text: string, headers: Record<string, string | string[] | undefined>, req?: ProviderRequest): GatewayError;
  streamStart(req: ProviderRequest, target?: Target): S;
  fromStreamEvent(state: S, event: StreamEvent): StreamStep<S>;
  /** Called when the upstream body ends; throws when the stream was cut short. */
  streamEnd(state: S): StreamChunk[];
  /**
   * Present when the gateway answers the request itself, with no upstream call (a token count
   * estimated for a provider that has no count endpoint): the answer. `toProvider` is then not
   * called. Rejects with a GatewayError for a request it cannot answer.
   */
  answer?(req: ProviderRequest): Promise<JsonResult>;
}
