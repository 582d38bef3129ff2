import { GatewayError } from '../errors/gateway-error.js';

/**
 * How much of a provider's answer the gateway reads. A whole body (JSON answers, error bodies) is
 * counted as it arrives and the call is aborted once it passes `maxBody`; a stream has no total cap
 * (it may run long), but one event (SSE) or one frame (AWS event-stream) may not pass `maxEvent`.
 * Nothing past a cap is buffered, so memory stays flat whatever a provider sends.
 */
export interface UpstreamLimits {
  /** Bytes of a whole (non-stream) answer body, success or error. */
  maxBody: number;
  /** Bytes of one stream event or event-stream frame. */
  maxEvent: number;
}

export const DEFAULT_UPSTREAM_LIMITS: UpstreamLimits = Object.freeze({ maxBody: 32 * 1024 * 1024, maxEvent: 4 * 1024 * 1024 });

/** The 502 a client gets when a provider's answer passes a cap (`what`: "answer body" or "stream event"). */
export function upstreamTooLarge(what: string, limit: number): GatewayError {
  return new GatewayError('upstream_response_too_large', `The provider's ${what} is larger than this gateway's limit of ${limit} bytes; the call was aborted.`);
}
