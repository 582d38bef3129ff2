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
      const rest = text.decode();
      if (rest.length > 0) parser.feed(rest);
      // A last event without its blank line is delivered; a half line is not an event.
      parser.reset({ consume: true });
    },
  };
}
