import { forwardedHeaders } from '../forward-headers.js';
import type { ProviderRequest, Target, UpstreamRequest } from '../types.js';
import type { OpenAICompatibleDescriptor } from './descriptors.js';
import { applyRequestQuirks } from './quirks.js';
import { GatewayError } from '../../errors/gateway-error.js';

/** Split a base URL once into origin and path prefix (cached: base URLs are few). */
const splitCache = new Map<string, { origin: string; prefix: string }>();
export function splitBaseUrl(baseUrl: string): { origin: string; prefix: string } {
  let hit = splitCache.get(baseUrl);
  if (hit) return hit;
  const u = new URL(baseUrl);
  hit = { origin: u.origin, prefix: u.pathname.replace(/\/+$/, '') };
  if (splitCache.size > 1000) splitCache.clear();
  splitCache.set(baseUrl, hit);
  return hit;
}

/**
 * The upstream request of a provider that speaks JSON over HTTP: `body` (absent: a GET) serialised
 * once, the content type and, for a stream, `accept: text/event-stream` set on `headers`.
 */
export function jsonUpstream(
  baseUrl: string,
  pathAndQuery: string,
  req: ProviderRequest,
  target: Target,
  headers: Record<string, string>,
  body: Record<string, unknown> | undefined,
): UpstreamRequest {
  const { origin, prefix } = splitBaseUrl(baseUrl);
  if (body) headers['content-type'] = 'application/json';
  if (req.stream) headers.accept = 'text/event-stream';
  return {
    origin,
    path: prefix + pathAndQuery,
    method: body ? 'POST' : 'GET',
    headers,
    body: body && JSON.stringify(body),
    stream: req.stream,
  };
}


/**
 * The body asking for the stream's usage chunk (`stream_options.include_usage: true`), the client's
 * other stream options kept: usage is counted (logs, usage limits) even when the client did not ask
 * or sent `include_usage: false`; the chunk is then not shown to it (see `openAIStreamStart`).
 */
export function withStreamUsage(body: Record<string, unknown>): Record<string, unknown> {
  const so = body.stream_options as Record<string, unknown> | null | undefined;
  if (so?.include_usage === true) return body;
  return { ...body, stream_options: { ...so, include_usage: true } };
}

/** OpenAI-shaped request → OpenAI-compatible upstream request. Pure. */
export function toOpenAICompatible(
  descriptor: OpenAICompatibleDescriptor,
  req: ProviderRequest,
  target: Target,
  baseUrl: string,
): UpstreamRequest {
  const path = descriptor.paths[req.endpoint];
  if (!path) {
    throw new GatewayError('unsupported_endpoint', `Provider ${descriptor.id} does not serve ${req.endpoint}.`);
  }
  const extra = descriptor.extraHeaders;
  const headers = forwardedHeaders(req, extra ? (h) => extra[h] !== undefined : undefined);
  if (descriptor.extraHeaders) Object.assign(headers, descriptor.extraHeaders);
  if (target.api_key) {
    headers[descriptor.auth.header] = descriptor.auth.scheme ? `${descriptor.auth.scheme} ${target.api_key}` : target.api_key;
  }
  if (target.vendor_organization) headers['openai-organization'] = target.vendor_organization;
  if (target.vendor_project) headers['openai-project'] = target.vendor_project;

  let payload = req.body;
  // A Responses API body is the host's own format: it goes as it came.
  if (payload && req.endpoint !== 'responses') {
    if (req.stream && descriptor.injectStreamUsage) payload = withStreamUsage(payload);
    payload = applyRequestQuirks(payload, descriptor.quirks);
  }
  return jsonUpstream(baseUrl, path, req, target, headers, payload);
}
