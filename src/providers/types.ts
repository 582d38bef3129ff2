import type { GatewayError } from '../errors/gateway-error.js';

export type Endpoint = 'chat' | 'completions' | 'embeddings' | 'models';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

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
  /** True when the URL came from a custom_host (subject to the host guard). */
  untrustedHost: boolean;
}

export interface SseEvent {
  event?: string;
  data: string;
}

/** One chunk for the client: the JSON text to put after `data: `, and usage when it carried some. */
export interface StreamChunk {
  data: string;
  usage?: Usage;
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
  auth: { header: string; scheme?: 'Bearer' };
  /** Ask for a usage chunk on streams (and hide it when the client did not ask). */
  injectStreamUsage?: boolean;
}

/** A provider: its descriptor and the pure functions that translate to and from its wire format. */
export interface Provider<S = unknown> {
  descriptor: ProviderDescriptor;
  toProvider(req: ProviderRequest, target: Target, baseUrl: string): UpstreamRequest;
  fromJson(req: ProviderRequest, text: string): JsonResult;
  fromError(status: number, text: string, headers: Record<string, string | string[] | undefined>): GatewayError;
  streamStart(req: ProviderRequest): S;
  fromStreamEvent(state: S, event: SseEvent): StreamStep<S>;
  /** Called when the upstream body ends; throws when the stream was cut short. */
  streamEnd(state: S): StreamChunk[];
}
