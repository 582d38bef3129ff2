import { createParser } from 'eventsource-parser';
import type { SseEvent } from '../providers/types.js';

export interface SseDecoder {
  /** Feed raw bytes; a UTF-8 character split across two writes is decoded whole. */
  write(bytes: Uint8Array): void;
  /** The body ended: flush what is left. */
  end(): void;
}

/**
 * Bytes → SSE events, parsed once. Comments (keep-alives) are dropped; CRLF, CR and LF line ends and
 * multi-line data fields are handled by eventsource-parser.
 */
export function createSseDecoder(onEvent: (ev: SseEvent) => void): SseDecoder {
  const text = new TextDecoder('utf-8');
  const parser = createParser({
    onEvent: (m) => onEvent(m.event === undefined ? { data: m.data } : { event: m.event, data: m.data }),
  });
  return {
    write(bytes) {
      const s = text.decode(bytes, { stream: true });
      if (s.length > 0) parser.feed(s);
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
