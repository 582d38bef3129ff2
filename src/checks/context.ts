/**
 * What webhook and log checks POST: the request and response as the checks see them, in the shape
 * receivers written for other gateways read (`request.json`, `request.text`, `response.json`,
 * `response.text`, `response.statusCode`, `requestType`, `provider`, `metadata`, `eventType`), plus
 * the client's headers with every credential removed (`safeHeaders`).
 */
import type { CheckEndpoint, CheckInput } from './types.js';

/** Header names that are never posted, whatever their value. */
const DROP = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'api-key',
  'x-api-key',
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
]);

/** Any name that smells of a credential is dropped too (provider and cloud keys, tokens, sessions). */
const SECRET_LIKE = /auth|key|secret|token|passw|credential|session|cookie|signature/i;

/** Gateway headers carry gateway keys, configs (with provider keys), virtual keys and cloud secrets. */
const KEEP_GATEWAY = new Set(['x-gateway-trace-id']);

/**
 * The client's headers safe to send to a third party: no `authorization`, no `x-gateway-*` (the
 * gateway key, inline configs with provider keys, virtual keys, cloud secrets) except the trace
 * id, and no header whose name looks like a credential.
 */
export function safeHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rawName, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    if (DROP.has(name) || SECRET_LIKE.test(name)) continue;
    if (name.startsWith('x-gateway-') && !KEEP_GATEWAY.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** The request type names receivers written for other gateways know. */
export const REQUEST_TYPE: Record<CheckEndpoint, string> = {
  chat: 'chatComplete',
  completions: 'complete',
  embeddings: 'embed',
  responses: 'createModelResponse',
  messages: 'messages',
};

/** The JSON posted by webhook and log. */
export function postedContext(input: CheckInput): Record<string, unknown> {
  const ctx: Record<string, unknown> = {
    request: { json: input.request.body ?? null, text: input.request.text, headers: safeHeaders(input.headers) },
    requestType: REQUEST_TYPE[input.endpoint],
    provider: input.provider ?? null,
    model: input.model ?? null,
    metadata: input.metadata,
    eventType: input.phase === 'request' ? 'beforeRequestHook' : 'afterRequestHook',
    trace_id: input.traceId ?? null,
  };
  if (input.response) {
    ctx.response = { json: input.response.body ?? null, text: input.response.text, statusCode: input.response.status };
  }
  return ctx;
}
