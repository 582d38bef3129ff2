/**
 * A host's own Responses API, passed through: the body goes as the client sent it, the answer and
 * the stream's events come back as the host wrote them; the gateway only reads the usage (chat shape,
 * for accounting and limits) and where the stream ends.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import { gatewayUsage } from '../bridges/responses-object.js';
import type { JsonResult, StreamChunk, StreamEvent, StreamStep } from '../types.js';
import { fromOpenAIError } from './from-provider.js';

/** The events that end a Responses stream: the response is then final. */
const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export function fromResponsesJson(text: string): JsonResult {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new GatewayError('upstream_invalid_response', 'The provider returned a body that is not JSON.');
  }
  if (!body || typeof body !== 'object') throw new GatewayError('upstream_invalid_response', 'The provider returned JSON that is not an object.');
  const usage = gatewayUsage((body as Record<string, unknown>).usage);
  return usage ? { body, raw: text, usage } : { body, raw: text };
}

export interface ResponsesPassState {
  done: boolean;
}

export const responsesStreamStart = (): ResponsesPassState => ({ done: false });

/** One upstream event → the same event for the client (its name kept); the final one carries the usage. */
export function fromResponsesEvent(state: ResponsesPassState, ev: StreamEvent): StreamStep<ResponsesPassState> {
  if (ev.data === '[DONE]') return { state: { done: true }, chunks: [], done: true };
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(ev.data) as Record<string, unknown>;
  } catch {
    throw new GatewayError('upstream_invalid_response', 'The provider sent a stream event that is not JSON.');
  }
  const type = typeof parsed?.type === 'string' ? parsed.type : ev.event;
  if (type === 'error' || ev.event === 'error') {
    const e = fromOpenAIError(502, JSON.stringify({ error: parsed }), {});
    throw new GatewayError('upstream_error', e.message, { status: 502, upstreamCode: e.upstreamCode });
  }
  const chunk: StreamChunk = type === undefined ? { data: ev.data } : { data: ev.data, event: type };
  if (type === undefined || !FINAL.has(type)) return { state, chunks: [chunk] };
  const usage = gatewayUsage((parsed.response as Record<string, unknown> | undefined)?.usage);
  if (usage) chunk.usage = usage;
  return { state: { done: true }, chunks: [chunk], done: true };
}

export function responsesStreamEnd(state: ResponsesPassState): StreamChunk[] {
  if (!state.done) throw new GatewayError('stream_interrupted');
  return [];
}
