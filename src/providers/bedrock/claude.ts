/**
 * Claude on Bedrock, served as it is to the Messages front door: InvokeModel
 * (`/model/{model}/invoke`, `/invoke-with-response-stream` for a stream) with the client's Messages
 * body less `model` and `stream`, plus `anthropic_version` and the client's `anthropic-beta` flags as
 * the `anthropic_beta` body field, as Anthropic's own Bedrock client sends them. Answers are
 * Anthropic's: the JSON as it is, and each stream `chunk` event's bytes (base64 in the event-stream
 * frame) an Anthropic event, read by the Anthropic provider's native functions. Pure.
 */
import { GatewayError } from '../../errors/gateway-error.js';
import { fromNativeStreamEvent, type NativeStreamState } from '../anthropic/native.js';
import type { ProviderRequest, StreamEvent, StreamStep } from '../types.js';
import { streamFailure } from './from-provider.js';

/** The API version Bedrock takes in a Claude request's body (unless the client sent its own). */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** The path below the runtime host, the body and the accept header of a Messages request. */
export function toBedrockClaude(req: ProviderRequest): { path: string; body: string; accept: string } {
  const { model, stream: _stream, ...rest } = req.body!;
  if (typeof model !== 'string' || model === '') throw new GatewayError('invalid_request_body', 'model is required: the Bedrock Claude model id, inference profile or ARN.', { param: 'model' });
  const body: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
  const beta = req.headers['anthropic-beta'];
  const flags = (Array.isArray(beta) ? beta.join(',') : (beta ?? '')).split(',').map((f) => f.trim()).filter((f) => f !== '');
  if (flags.length > 0 && body.anthropic_beta === undefined) body.anthropic_beta = flags;
  return {
    path: `/model/${encodeURIComponent(model)}/${req.stream ? 'invoke-with-response-stream' : 'invoke'}`,
    body: JSON.stringify(body),
    accept: req.stream ? 'application/vnd.amazon.eventstream' : 'application/json',
  };
}

/**
 * One event-stream event of InvokeModelWithResponseStream → the Anthropic event its `chunk` carries
 * (named by its `type`); an exception frame is the stream's failure; anything else carries nothing.
 */
export function fromClaudeStreamEvent(s: NativeStreamState, ev: StreamEvent): StreamStep<NativeStreamState> {
  if (ev.event === 'error') throw streamFailure(ev);
  if (ev.event !== 'chunk') return { state: s, chunks: [] };
  let data: string;
  let type: unknown;
  try {
    data = Buffer.from((JSON.parse(ev.data) as { bytes: string }).bytes, 'base64').toString('utf8');
    type = (JSON.parse(data) as { type?: unknown }).type;
  } catch {
    throw new GatewayError('upstream_invalid_response', 'The provider sent a stream chunk that is not base64 JSON.');
  }
  return fromNativeStreamEvent(s, typeof type === 'string' ? { event: type, data } : { data });
}
