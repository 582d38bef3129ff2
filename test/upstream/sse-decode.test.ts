import { describe, expect, it } from 'vitest';
import type { SseEvent } from '../../src/providers/types.js';
import { createSseDecoder } from '../../src/upstream/sse-decode.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Feed the pieces in order, then end(); returns every event and when (after which write) it came. */
function decode(pieces: (string | Uint8Array)[], end = true): SseEvent[] {
  const out: SseEvent[] = [];
  const d = createSseDecoder((ev) => out.push(ev));
  for (const p of pieces) d.write(typeof p === 'string' ? enc(p) : p);
  if (end) d.end();
  return out;
}

/** Split bytes at every given offset. */
function splitAt(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const o of offsets) {
    out.push(bytes.subarray(prev, o));
    prev = o;
  }
  out.push(bytes.subarray(prev));
  return out;
}

const byteByByte = (bytes: Uint8Array): Uint8Array[] => Array.from(bytes, (b) => Uint8Array.of(b));

describe('createSseDecoder', () => {
  it('decodes OpenAI-style data events and [DONE]', () => {
    expect(decode(['data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n'])).toEqual([
      { data: '{"a":1}' },
      { data: '{"a":2}' },
      { data: '[DONE]' },
    ]);
  });

  it('emits an event only once its blank line arrived', () => {
    const out: SseEvent[] = [];
    const d = createSseDecoder((ev) => out.push(ev));
    d.write(enc('data: one\n'));
    expect(out).toEqual([]);
    d.write(enc('\n'));
    expect(out).toEqual([{ data: 'one' }]);
    d.write(enc('data: two'));
    d.write(enc('\n\n'));
    expect(out).toEqual([{ data: 'one' }, { data: 'two' }]);
  });

  it('decodes a 2-byte character split between two writes', () => {
    const bytes = enc('data: {"c":"café"}\n\n');
    const e = bytes.indexOf(0xc3); // first byte of é
    expect(e).toBeGreaterThan(0);
    expect(decode(splitAt(bytes, [e + 1]))).toEqual([{ data: '{"c":"café"}' }]);
  });

  it('decodes a 4-byte emoji split at every inner position', () => {
    const bytes = enc('data: {"c":"ok 🚀 go"}\n\n');
    const start = bytes.indexOf(0xf0);
    for (const cut of [start + 1, start + 2, start + 3]) {
      expect(decode(splitAt(bytes, [cut]))).toEqual([{ data: '{"c":"ok 🚀 go"}' }]);
    }
    // and across three writes at once
    expect(decode(splitAt(bytes, [start + 1, start + 3]))).toEqual([{ data: '{"c":"ok 🚀 go"}' }]);
  });

  it('does not emit U+FFFD for a split character', () => {
    const bytes = enc('data: é🚀\n\n');
    const events = decode(byteByByte(bytes));
    expect(events[0]!.data).not.toContain('\uFFFD');
    expect(events).toEqual([{ data: 'é🚀' }]);
  });

  it('accepts CRLF line ends', () => {
    expect(decode(['data: a\r\n\r\ndata: b\r\n\r\n'])).toEqual([{ data: 'a' }, { data: 'b' }]);
  });

  it('accepts a CRLF split between two writes (the CR at the end of one write)', () => {
    expect(decode(['data: a\r', '\n\r', '\ndata: b\r\n\r\n'])).toEqual([{ data: 'a' }, { data: 'b' }]);
  });

  it('accepts lone CR line ends', () => {
    expect(decode(['data: a\r\rdata: b\r\r'])).toEqual([{ data: 'a' }, { data: 'b' }]);
  });

  it('drops keep-alive comments', () => {
    expect(
      decode([': OPENROUTER PROCESSING\n\n', ':keep-alive\n\n', 'data: {"x":1}\n', ': inline comment\n', '\n']),
    ).toEqual([{ data: '{"x":1}' }]);
  });

  it('joins multi-line data with \\n', () => {
    expect(decode(['data: {"a":\ndata: 1}\n\n'])).toEqual([{ data: '{"a":\n1}' }]);
    expect(decode(['data: line1\r\ndata: line2\r\ndata: line3\r\n\r\n'])).toEqual([{ data: 'line1\nline2\nline3' }]);
  });

  it('keeps event names and reports no name for unnamed events', () => {
    const events = decode(['event: message_start\ndata: {"type":"message_start"}\n\n', 'data: plain\n\n', 'event: error\ndata: {"error":{}}\n\n']);
    expect(events).toEqual([
      { event: 'message_start', data: '{"type":"message_start"}' },
      { data: 'plain' },
      { event: 'error', data: '{"error":{}}' },
    ]);
    expect(Object.keys(events[1]!)).toEqual(['data']);
  });

  it('removes only one space after the colon', () => {
    expect(decode(['data:no-space\n\ndata:  two-spaces\n\n'])).toEqual([{ data: 'no-space' }, { data: ' two-spaces' }]);
  });

  it('ignores id and retry fields', () => {
    expect(decode(['id: 7\nretry: 1000\ndata: x\n\n'])).toEqual([{ data: 'x' }]);
  });

  it('delivers a final event without its trailing blank line at end()', () => {
    expect(decode(['data: a\n\ndata: last'], false)).toEqual([{ data: 'a' }]);
    expect(decode(['data: a\n\ndata: last'])).toEqual([{ data: 'a' }, { data: 'last' }]);
    expect(decode(['data: a\n\ndata: last\n'])).toEqual([{ data: 'a' }, { data: 'last' }]);
  });

  it('flushes an incomplete UTF-8 sequence at end() rather than dropping the event', () => {
    const bytes = enc('data: x🚀');
    const events = decode([bytes.subarray(0, bytes.length - 2)]);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.startsWith('x')).toBe(true);
  });

  it('emits nothing for an empty body', () => {
    expect(decode([])).toEqual([]);
    expect(decode(['\n\n\n'])).toEqual([]);
  });

  it('gives the same events byte by byte as in one buffer', () => {
    const text =
      ': keep-alive\r\n\r\n' +
      'data: {"content":"héllo 🚀"}\r\n\r\n' +
      'event: ping\ndata: {}\n\n' +
      'data: multi\ndata: line ✓\n\n' +
      'data: cr\r\r' +
      'data: [DONE]\n\n' +
      'data: tail-without-blank-line';
    const bytes = enc(text);
    const whole = decode([bytes]);
    expect(whole).toEqual([
      { data: '{"content":"héllo 🚀"}' },
      { event: 'ping', data: '{}' },
      { data: 'multi\nline ✓' },
      { data: 'cr' },
      { data: '[DONE]' },
      { data: 'tail-without-blank-line' },
    ]);
    expect(decode(byteByByte(bytes))).toEqual(whole);
    // and in chunks of 3 and 7 bytes (arbitrary cuts through characters and line ends)
    for (const size of [3, 7]) {
      const pieces: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
      expect(decode(pieces)).toEqual(whole);
    }
  });
});

describe('SSE event cap', () => {
  it('bytes without an event end past maxEvent are upstream_response_too_large', () => {
    const d = createSseDecoder(() => {}, 1024);
    d.write(enc('data: {"x":"'));
    let err: unknown;
    try {
      for (let i = 0; i < 10; i++) d.write(enc('a'.repeat(200)));
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'upstream_response_too_large', status: 502 });
  });

  it('many events, each under the cap, are read however many bytes they add up to; comments restart the count', () => {
    const out: SseEvent[] = [];
    const d = createSseDecoder((ev) => out.push(ev), 1024);
    for (let i = 0; i < 50; i++) d.write(enc(`data: ${'b'.repeat(600)}\n\n`));
    for (let i = 0; i < 50; i++) d.write(enc(`: ${'k'.repeat(600)}\n`));
    d.end();
    expect(out).toHaveLength(50);
  });
});
