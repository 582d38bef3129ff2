import { createParser } from 'eventsource-parser';
import type { SseEvent } from '../providers/types.js';
import { DEFAULT_UPSTREAM_LIMITS, upstreamTooLarge } from './limits.js';

export interface SseDecoder {
  /** Feed raw bytes; a UTF-8 character split across two writes is decoded whole. */
  write(bytes: Uint8Array): void;
  /** The body ended: flush what is left. */
  end(): void;
}

/**
 * Bytes → SSE events, parsed once. Comments (keep-alives) are dropped; CRLF, CR and LF line ends and
 * multi-line data fields are handled by eventsource-parser.
 *
 * One event may take at most `maxEvent` bytes: the bytes written since the parser last delivered an
 * event or a comment are counted, and past the cap `write` throws upstream_response_too_large, so a
 * provider that never ends its line or event cannot make the parser buffer without bound. (The count
 * restarts at the end of the write in which something was delivered: a cap is held to within one
 * write, undici's 64 KiB at most.)
 */
export function createSseDecoder(onEvent: (ev: SseEvent) => void, maxEvent = DEFAULT_UPSTREAM_LIMITS.maxEvent): SseDecoder {
  const text = new TextDecoder('utf-8');
  let pending = 0;
  let delivered = false;
  const parser = createParser({
    onEvent: (m) => {
      delivered = true;
      onEvent(m.event === undefined ? { data: m.data } : { event: m.event, data: m.data });
    },
    onComment: () => {
      delivered = true;
    },
  });
  return {
    write(bytes) {
      const s = text.decode(bytes, { stream: true });
      delivered = false;
      if (s.length > 0) parser.feed(s);
      pending = delivered ? 0 : pending + bytes.byteLength;
      if (pending > maxEvent) throw upstreamTooLarge('stream event', maxEvent);
    },
    end() {
      // A last event without its blank line is delivered: end its last line and the event (a
      // pending lone CR becomes a line end too). reset({consume}) alone parses the line but never
      // dispatches the event.
      parser.feed(`${text.decode()}\n\n`);
      parser.reset();
    },
  };
}
