import { parseBody, type BodyEndpoint } from '../config/bodies.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { Endpoint, ProviderRequest } from '../providers/types.js';
import { redact } from '../security/redact.js';
import { SSE_DONE, SSE_HEADERS, sseComment, sseData, sseError } from '../upstream/sse-encode.js';
import type { Framing, IngressFormat, IngressRoute } from './types.js';

/**
 * OpenAI's framing: a JSON answer as the provider's text (or its body serialised), a stream as SSE
 * `data:` frames ending in `data: [DONE]`, an error as `{ error: {...} }` (redacted by kind,
 * security/redact.ts), after a stream started as an `event: error` frame without [DONE].
 */
export const OPENAI_FRAMING: Framing = {
  json: (ev) => ev.raw ?? JSON.stringify(ev.body),
  streamHeaders: SSE_HEADERS,
  chunk: sseData,
  comment: sseComment,
  end: SSE_DONE,
  errorBody: (ge: GatewayError, traceId: string) => redact(ge.toBody(traceId)),
  streamError: sseError,
};

/** An OpenAI-shaped format whose JSON body is validated by `src/config/bodies.ts`. */
export function openAIBodyFormat(endpoint: BodyEndpoint, routes: readonly IngressRoute[], streams: boolean): IngressFormat {
  return {
    id: endpoint,
    endpoint,
    routes,
    hasBody: true,
    parse: (raw) => parseBody(endpoint, raw) as Record<string, unknown>,
    toRequest: (body, headers): ProviderRequest => ({ endpoint, body, stream: streams && body?.stream === true, headers }),
    framing: OPENAI_FRAMING,
  };
}

/** An OpenAI-shaped format without a body (a GET). */
export function openAIBodylessFormat(endpoint: Endpoint, routes: readonly IngressRoute[]): IngressFormat {
  return {
    id: endpoint,
    endpoint,
    routes,
    hasBody: false,
    parse: () => undefined,
    toRequest: (body, headers): ProviderRequest => ({ endpoint, body, stream: false, headers }),
    framing: OPENAI_FRAMING,
  };
}
