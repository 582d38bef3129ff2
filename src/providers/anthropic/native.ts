/**
 * Anthropic's Messages API served as it is: a Messages (or token count) request from its front door goes
 * upstream as the client sent it (the model possibly overridden by routing), and the answer comes
 * back unchanged: the JSON text verbatim, each stream event with its name and data as received. Only
 * the usage is read, for accounting. Pure.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import { forwardedHeaders } from '../forward-headers.js';
import { jsonUpstream } from '../openai-compatible/to-provider.js';
import type { JsonResult, ProviderDescriptor, ProviderRequest, StreamChunk, StreamEvent, StreamStep, Target, UpstreamRequest } from '../types.js';
import { parse, readCounts, streamError, toUsage, type TokenCounts } from './from-provider.js';

/** The client's headers an Anthropic-family upstream gets as they were sent (the API version and beta flags). */
export const ANTHROPIC_CLIENT_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

const header = (req: ProviderRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

/** A Messages request → the same request upstream: the client's anthropic-version (else the default) and anthropic-beta, the target's key. */
export function toAnthropicNative(descriptor: ProviderDescriptor, req: ProviderRequest, target: Target, baseUrl: string, path: string): UpstreamRequest {
  const headers = forwardedHeaders(req, (h) => h === descriptor.auth.header || descriptor.extraHeaders?.[h] !== undefined);
  if (descriptor.extraHeaders) Object.assign(headers, descriptor.extraHeaders);
  for (const name of ANTHROPIC_CLIENT_HEADERS) {
    const v = header(req, name);
    if (v !== undefined) headers[name] = v;
  }
  if (target.api_key) headers[descriptor.auth.header] = target.api_key;
  return jsonUpstream(baseUrl, path, req, target, headers, req.body);
}

/** A Messages answer (or a token count): its text sent as received, its usage read when it has one (cache reads and writes in the prompt). */
export function fromNativeJson(text: string): JsonResult {
  const body = parse(text, 'a body');
  if (body.usage === undefined) return { body, raw: text };
  const counts: TokenCounts = { input: 0, output: 0 };
  readCounts(counts, body.usage);
  return { body, raw: text, usage: toUsage(counts) };
}

export interface NativeStreamState {
  readonly native: true;
  counts: TokenCounts;
  done: boolean;
}

export const nativeStreamStart = (): NativeStreamState => ({ native: true, counts: { input: 0, output: 0 }, done: false });

/**
 * One upstream event → the same event for the client (name and data as received); message_start and
 * message_delta are read for their usage, which message_stop's chunk carries. An `error` event is the
 * stream's failure (before the first byte, a retry or fallback may still take it).
 */
export function fromNativeStreamEvent(s: NativeStreamState, ev: StreamEvent): StreamStep<NativeStreamState> {
  if (ev.event === 'error') throw streamError(ev.data, true);
  const chunk: StreamChunk = ev.event === undefined ? { data: ev.data } : { data: ev.data, event: ev.event };
  if (ev.event === 'message_start') readCounts(s.counts, (parse(ev.data, 'a stream event').message as Record<string, unknown> | undefined)?.usage);
  else if (ev.event === 'message_delta') readCounts(s.counts, parse(ev.data, 'a stream event').usage);
  else if (ev.event === 'message_stop') {
    s.done = true;
    chunk.usage = toUsage(s.counts);
    return { state: s, chunks: [chunk], done: true };
  }
  return { state: s, chunks: [chunk] };
}

export function nativeStreamEnd(s: NativeStreamState): StreamChunk[] {
  if (!s.done) throw new GatewayError('stream_interrupted');
  return [];
}
