import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { GatewayError } from '../errors/gateway-error.js';
import type { StreamEvent } from '../providers/types.js';
import { DEFAULT_UPSTREAM_LIMITS } from './limits.js';
import { AwsFrameSplitter } from './aws-event-frames.js';

export interface AwsEventStreamDecoder {
  /** Feed raw bytes; throws on a frame that does not decode (bad CRC, impossible length). */
  write(bytes: Uint8Array): void;
  /** The body ended; throws when it ended inside a frame. */
  end(): void;
}

/** One codec for every stream: decoding keeps no state between calls (its message buffer is not used). */
const codec = new EventStreamCodec(toUtf8, fromUtf8);

function headerText(headers: Record<string, { type: string; value: unknown }>, name: string): string | undefined {
  const h = headers[name];
  return h && h.type === 'string' ? (h.value as string) : undefined;
}

/** An exception or error frame → the generic `error` event: `{type, message, ...payload fields}` as JSON. */
function errorEvent(type: string, payload: string, fallbackMessage?: string): StreamEvent {
  let fields: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(payload);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) fields = parsed as Record<string, unknown>;
  } catch {
    if (payload.length > 0) fields = { message: payload };
  }
  if (fields.message === undefined && typeof fields.Message === 'string') fields.message = fields.Message;
  if (fields.message === undefined && fallbackMessage !== undefined) fields.message = fallbackMessage;
  return { event: 'error', data: JSON.stringify({ ...fields, type }) };
}

/** One whole frame → its event; throws upstream_invalid_response when it does not decode (a bad CRC). */
function eventOf(bytes: Uint8Array): StreamEvent {
  let message;
  try {
    message = codec.decode(bytes);
  } catch (e) {
    throw new GatewayError('upstream_invalid_response', `The provider sent an event-stream frame that does not decode: ${(e as Error).message}`);
  }
  const headers = message.headers as Record<string, { type: string; value: unknown }>;
  const payload = message.body.byteLength === 0 ? '' : toUtf8(message.body);
  const kind = headerText(headers, ':message-type') ?? 'event';
  if (kind === 'event') {
    const type = headerText(headers, ':event-type');
    return type === undefined ? { data: payload } : { event: type, data: payload };
  }
  if (kind === 'exception') return errorEvent(headerText(headers, ':exception-type') ?? 'exception', payload);
  return errorEvent(headerText(headers, ':error-code') ?? 'error', payload, headerText(headers, ':error-message'));
}

/**
 * Bytes of an `application/vnd.amazon.eventstream` body → stream events. Frames are cut from the
 * bytes by AwsFrameSplitter (aws-event-frames.ts: a frame split across TCP writes is held until whole,
 * frames coalesced in one write are each read, a frame over `maxFrame` is refused from its prelude),
 * and each is checked by the maintained codec (both CRCs) before it is read. The codec only decodes
 * whole messages; the splitting that @smithy/core's chunked stream does is asynchronous and uncapped,
 * so it is done here.
 *
 * - `:message-type: event` → `{event: <:event-type>, data: <payload as UTF-8>}`.
 * - `:message-type: exception` → `{event: 'error', data: JSON {type: <:exception-type>, message, ...}}`;
 *   `:message-type: error` → the same with `type: <:error-code>` and `message: <:error-message>`.
 *   `error` is the name an SSE provider gives its error events too; the provider maps the type.
 *
 * A bad CRC, an impossible length, or bytes left over at the end are `upstream_invalid_response` /
 * `stream_interrupted`, thrown from `write`/`end` (the caller turns them into the stream's error).
 */
export function createAwsEventStreamDecoder(
  onEvent: (event: StreamEvent) => void,
  maxFrame = DEFAULT_UPSTREAM_LIMITS.maxEvent,
): AwsEventStreamDecoder {
  return new AwsFrameSplitter((bytes) => onEvent(eventOf(bytes)), maxFrame);
}
