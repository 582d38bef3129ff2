import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { GatewayError } from '../errors/gateway-error.js';
import type { StreamEvent } from '../providers/types.js';
import { DEFAULT_UPSTREAM_LIMITS, upstreamTooLarge } from './limits.js';

export interface AwsEventStreamDecoder {
  /** Feed raw bytes; throws on a frame that does not decode (bad CRC, impossible length). */
  write(bytes: Uint8Array): void;
  /** The body ended; throws when it ended inside a frame. */
  end(): void;
}

/** The prelude (total length, headers length, prelude CRC); a message is at least 16 bytes. */
const PRELUDE = 12;
const MIN_MESSAGE = 16;

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

/**
 * Bytes of an `application/vnd.amazon.eventstream` body → stream events. Frames are buffered until
 * their `total length` bytes are there (a frame split across TCP writes), every whole frame in a
 * write is decoded (frames coalesced in one write), and each is checked by the maintained codec
 * (both CRCs) before it is read.
 *
 * - `:message-type: event` → `{event: <:event-type>, data: <payload as UTF-8>}`.
 * - `:message-type: exception` → `{event: 'error', data: JSON {type: <:exception-type>, message, ...}}`;
 *   `:message-type: error` → the same with `type: <:error-code>` and `message: <:error-message>`.
 *   `error` is the name an SSE provider gives its error events too; the provider maps the type.
 *
 * A bad CRC, an impossible length, or bytes left over at the end are `upstream_invalid_response` /
 * `stream_interrupted`, thrown from `write`/`end` (the caller turns them into the stream's error). A
 * frame that declares more than `maxFrame` bytes is `upstream_response_too_large`, refused from its
 * prelude before it is buffered.
 */
export function createAwsEventStreamDecoder(
  onEvent: (event: StreamEvent) => void,
  maxFrame = DEFAULT_UPSTREAM_LIMITS.maxEvent,
): AwsEventStreamDecoder {
  const frame = (bytes: Uint8Array): void => {
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
      onEvent(type === undefined ? { data: payload } : { event: type, data: payload });
    } else if (kind === 'exception') {
      onEvent(errorEvent(headerText(headers, ':exception-type') ?? 'exception', payload));
    } else {
      onEvent(errorEvent(headerText(headers, ':error-code') ?? 'error', payload, headerText(headers, ':error-message')));
    }
  };

  /**
   * Bytes of a frame not yet complete, as they arrived (each a copy: the caller may reuse its
   * buffer), `held` of them in all. They are joined once, when the frame is whole: joining on every
   * write would copy a large frame sent in many small writes over and over (quadratic).
   */
  let parts: Uint8Array[] = [];
  let held = 0;
  /** The total length of the frame being held, once its prelude is in (0 before). */
  let need = 0;

  /** The total length a prelude declares, checked before anything more of the frame is kept. */
  const totalOf = (prelude: Uint8Array): number => {
    const total = new DataView(prelude.buffer, prelude.byteOffset, PRELUDE).getUint32(0, false);
    if (total < MIN_MESSAGE) {
      throw new GatewayError('upstream_invalid_response', `The provider sent an event-stream frame of impossible length ${total}.`);
    }
    if (total > maxFrame) throw upstreamTooLarge('event-stream frame', maxFrame);
    return total;
  };

  /** The first PRELUDE bytes held (they may span parts). */
  const heldPrelude = (): Uint8Array => {
    if (parts[0]!.byteLength >= PRELUDE) return parts[0]!;
    const out = new Uint8Array(PRELUDE);
    let at = 0;
    for (const p of parts) {
      const n = Math.min(p.byteLength, PRELUDE - at);
      out.set(p.subarray(0, n), at);
      if ((at += n) === PRELUDE) break;
    }
    return out;
  };

  /** Decodes every whole frame in `buf` and holds the rest (copied unless `owned`: a buffer made here). */
  const drain = (buf: Uint8Array, owned: boolean): void => {
    let offset = 0;
    while (buf.byteLength - offset >= PRELUDE) {
      const total = totalOf(buf.subarray(offset, offset + PRELUDE));
      if (buf.byteLength - offset < total) {
        need = total;
        break;
      }
      frame(buf.subarray(offset, offset + total));
      offset += total;
    }
    if (offset < buf.byteLength) {
      // Uint8Array#slice copies (Buffer#slice would not)
      parts = [owned ? buf.subarray(offset) : Uint8Array.prototype.slice.call(buf, offset)];
      held = buf.byteLength - offset;
    }
  };

  return {
    write(chunk) {
      if (held === 0) return drain(chunk, false);
      parts.push(Uint8Array.prototype.slice.call(chunk));
      held += chunk.byteLength;
      if (need === 0 && held >= PRELUDE) need = totalOf(heldPrelude());
      if (need === 0 || held < need) return;
      const joined = new Uint8Array(held);
      let at = 0;
      for (const p of parts) {
        joined.set(p, at);
        at += p.byteLength;
      }
      parts = [];
      held = 0;
      need = 0;
      drain(joined, true);
    },
    end() {
      if (held > 0) {
        parts = [];
        held = 0;
        need = 0;
        throw new GatewayError('stream_interrupted', 'The provider stream ended inside an event-stream frame.');
      }
    },
  };
}
