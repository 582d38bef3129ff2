import type { StreamEvent, StreamFraming } from '../providers/types.js';
import { createSseDecoder } from './sse-decode.js';
import { createAwsEventStreamDecoder } from './aws-event-stream.js';

/** Bytes of a streamed body → stream events, whatever the framing. */
export interface StreamDecoder {
  /**
   * Feed raw bytes as they arrive; a frame or character split across two writes is decoded whole.
   * Throws (a GatewayError) on bytes the framing cannot read; the call then fails with it.
   */
  write(bytes: Uint8Array): void;
  /** The body ended: flush what is left; throws when it ended inside a frame. */
  end(): void;
}

interface Framing {
  /** The Content-Type a provider's 2xx stream answer carries in this framing. */
  contentType: string;
  decoder(onEvent: (event: StreamEvent) => void, maxEvent?: number): StreamDecoder;
}

/**
 * One decoder per framing a descriptor may name. Adding one (AWS event-stream: binary frames with
 * CRCs, `application/vnd.amazon.eventstream`) is its decoder file here, an entry in this table and the
 * name in `StreamFraming`; the decoder emits the same generic `{event?, data}`.
 */
const FRAMINGS: Readonly<Record<StreamFraming, Framing>> = {
  sse: { contentType: 'text/event-stream', decoder: createSseDecoder },
  'aws-event-stream': { contentType: 'application/vnd.amazon.eventstream', decoder: createAwsEventStreamDecoder },
};

/**
 * The decoder for a 2xx answer to a stream request in `framing`, or undefined when the answer is not
 * in that framing (its body is then read whole, and refused as a stream by the caller). `maxEvent`:
 * the bytes one event or frame may take (over it the decoder throws upstream_response_too_large).
 */
export function streamDecoder(
  framing: StreamFraming,
  headers: Record<string, string | string[] | undefined>,
  onEvent: (event: StreamEvent) => void,
  maxEvent?: number,
): StreamDecoder | undefined {
  const f = FRAMINGS[framing];
  const ct = headers['content-type'];
  const v = Array.isArray(ct) ? ct[0] : ct;
  return v !== undefined && v.includes(f.contentType) ? f.decoder(onEvent, maxEvent) : undefined;
}
