import type { GatewayError } from '../errors/gateway-error.js';
import { redact } from '../security/redact.js';
import { SSE_HEADERS, sseComment, sseData, sseEvent } from '../upstream/sse-encode.js';
import type { Framing } from './types.js';

/** The error types Anthropic's API answers with. */
const ANTHROPIC_TYPES: ReadonlySet<string> = new Set([
  'invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error',
  'request_too_large', 'rate_limit_error', 'api_error', 'timeout_error', 'overloaded_error',
]);

const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/**
 * The nearest Anthropic error type of a gateway error: a provider's own when it is one of Anthropic's,
 * else by status (a usage limit is a rate limit).
 */
export function anthropicErrorType(ge: GatewayError): string {
  if (ge.code === 'upstream_error' && ANTHROPIC_TYPES.has(ge.type)) return ge.type;
  if (ge.type === 'usage_limit_error') return 'rate_limit_error';
  return TYPE_BY_STATUS[ge.status] ?? (ge.status >= 500 ? 'api_error' : 'invalid_request_error');
}

/**
 * Anthropic's error envelope, `{type:"error", error:{type, message}}`, with the gateway's code (or the
 * provider's) and the offending field beside them; the trace id as `request_id`, the issues and
 * any extra fields (a 446's `hook_results`) at the top level, as the OpenAI envelope has them.
 */
export function anthropicErrorBody(ge: GatewayError, traceId: string): Record<string, unknown> {
  const error: Record<string, unknown> = { type: anthropicErrorType(ge), message: ge.message, code: ge.upstreamCode ?? ge.code };
  if (ge.param !== null) error.param = ge.param;
  const body: Record<string, unknown> = { type: 'error', error, request_id: traceId };
  if (ge.issues) body.issues = ge.issues;
  if (ge.extra) Object.assign(body, ge.extra);
  return redact(body);
}

/**
 * Anthropic's framing: a JSON answer as the provider's text (or its body serialised); a stream as
 * named SSE events (`event:` then `data:`, the event name the chunk carries) with no end marker
 * (`message_stop` is the last event); an error as Anthropic's envelope, after a stream started as an
 * `event: error` frame.
 */
export const ANTHROPIC_FRAMING: Framing = {
  json: (ev) => ev.raw ?? JSON.stringify(ev.body),
  streamHeaders: SSE_HEADERS,
  chunk: (data, event) => (event === undefined ? sseData(data) : sseEvent(data, event)),
  comment: sseComment,
  end: '',
  errorBody: anthropicErrorBody,
  streamError: (body) => sseEvent(JSON.stringify(body), 'error'),
};
