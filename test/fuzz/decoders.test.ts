/**
 * Property tests of the two stream decoders an upstream answer goes through: any chunking of a valid
 * stream decodes to the events of the whole stream (and to the events it was written from); any
 * bytes at all, in any chunks, end in events or a typed GatewayError, never another exception.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import type { StreamEvent } from '../../src/providers/types.js';
import { createAwsEventStreamDecoder } from '../../src/upstream/aws-event-stream.js';
import { createSseDecoder } from '../../src/upstream/sse-decode.js';
import { check, PROPERTY_TIMEOUT_MS } from './_fuzz.js';
import { awsEventFrame as frame } from '../helpers/aws-frame.js';

/** `bytes` cut at the given fractions (each in [0, 1)), in order: the TCP writes a provider might make. */
function cut(bytes: Uint8Array, at: readonly number[]): Uint8Array[] {
  const points = [...new Set(at.map((f) => Math.floor(f * bytes.length)))].filter((p) => p > 0).sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  out.push(bytes.subarray(prev));
  return out;
}

const cuts = fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { maxLength: 40 });

/** Bytes of one chunk are copied by the caller's buffer reuse in real streams: hand in fresh copies that are then scribbled over. */
function feed(write: (b: Uint8Array) => void, chunks: readonly Uint8Array[]): void {
  for (const c of chunks) {
    const copy = Uint8Array.from(c);
    write(copy);
    copy.fill(0xee);
  }
}

// ---------------------------------------------------------------------------------------------
// SSE

interface SseSpec {
  event?: string;
  /** The data field's lines (joined with \n by the decoder). */
  lines: string[];
  comment?: string;
  id?: string;
}

/** Text without line ends (any other character, multi-byte ones included). */
const lineText = fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, ''));
const eventName = fc.stringMatching(/^[a-z_.]{1,12}$/);
const sseSpec: fc.Arbitrary<SseSpec> = fc.record(
  {
    event: eventName,
    lines: fc.array(lineText, { minLength: 1, maxLength: 3 }),
    comment: lineText,
    id: fc.stringMatching(/^[a-z0-9]{1,6}$/),
  },
  { requiredKeys: ['lines'] },
);
const lineEnd = fc.constantFrom('\n', '\r\n', '\r');

/** The wire text of `events`, each line ended by one of `ends` (cycled). */
function sseText(events: readonly SseSpec[], ends: readonly string[], blankLast: boolean): string {
  let i = 0;
  const end = () => ends[i++ % ends.length]!;
  let out = '';
  events.forEach((e, n) => {
    if (e.comment !== undefined) out += `:${e.comment}${end()}`;
    if (e.event !== undefined) out += `event: ${e.event}${end()}`;
    if (e.id !== undefined) out += `id: ${e.id}${end()}`;
    for (const l of e.lines) out += `data: ${l}${end()}`;
    if (blankLast || n < events.length - 1) out += end();
  });
  return out;
}

function decodeSse(chunks: readonly Uint8Array[]): StreamEvent[] {
  const got: StreamEvent[] = [];
  const d = createSseDecoder((e) => got.push(e));
  feed((b) => d.write(b), chunks);
  d.end();
  return got;
}

const expectedSse = (events: readonly SseSpec[]): StreamEvent[] =>
  events.map((e) => (e.event === undefined ? { data: e.lines.join('\n') } : { event: e.event, data: e.lines.join('\n') }));

describe('SSE decoder (src/upstream/sse-decode.ts)', () => {
  it(
    'any chunking of a valid stream decodes to the events it was written from',
    () => {
      check(
        fc.property(fc.array(sseSpec, { minLength: 1, maxLength: 8 }), fc.array(lineEnd, { minLength: 1, maxLength: 3 }), fc.boolean(), cuts, (events, ends, blankLast, at) => {
          // A lone CR followed by a line that starts with LF would read as CRLF: keep CR-only ends unmixed with LF ones.
          const safeEnds = ends.includes('\r') ? ['\r'] : ends;
          const bytes = new TextEncoder().encode(sseText(events, safeEnds, blankLast));
          const whole = decodeSse([bytes]);
          expect(whole).toEqual(expectedSse(events));
          expect(decodeSse(cut(bytes, at))).toEqual(whole);
        }),
        { runs: 400 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'arbitrary bytes in arbitrary chunks never throw, and chunking never changes the events',
    () => {
      const noise = fc.oneof(
        fc.uint8Array({ maxLength: 400 }),
        // bytes that look like SSE: fields, colons, line ends, broken UTF-8
        fc.array(fc.constantFrom('data:', 'event:', 'id:', 'retry:', ':', ' ', 'x', '\n', '\r', '\r\n', '\u00e9', '\u{1F600}', '\xff'), { maxLength: 80 }).map((p) => new TextEncoder().encode(p.join(''))),
      );
      check(
        fc.property(noise, cuts, (bytes, at) => {
          const whole = decodeSse([bytes]);
          expect(decodeSse(cut(bytes, at))).toEqual(whole);
        }),
        { runs: 400 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

// ---------------------------------------------------------------------------------------------
// AWS event-stream

type Kind = 'event' | 'exception' | 'error';
interface AwsSpec {
  kind: Kind;
  type: string;
  payload: string;
  /** For `error` frames: the :error-message header. */
  message?: string;
}

function awsFrame(s: AwsSpec): Uint8Array {
  const payload = new TextEncoder().encode(s.payload);
  if (s.kind === 'event') return frame({ ':message-type': 'event', ':event-type': s.type, ':content-type': 'application/json' }, payload);
  if (s.kind === 'exception') return frame({ ':message-type': 'exception', ':exception-type': s.type }, payload);
  return frame({ ':message-type': 'error', ':error-code': s.type, ':error-message': s.message ?? '' }, payload);
}

const awsSpec: fc.Arbitrary<AwsSpec> = fc.record(
  {
    kind: fc.constantFrom<Kind>('event', 'event', 'exception', 'error'),
    type: fc.stringMatching(/^[A-Za-z]{1,16}$/),
    payload: fc.oneof(fc.json({ maxDepth: 2 }), fc.string({ unit: 'grapheme', maxLength: 40 })),
    message: fc.string({ maxLength: 20 }),
  },
  { requiredKeys: ['kind', 'type', 'payload'] },
);

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function decodeAws(chunks: readonly Uint8Array[]): { events: StreamEvent[]; error?: GatewayError } {
  const events: StreamEvent[] = [];
  const d = createAwsEventStreamDecoder((e) => events.push(e));
  try {
    feed((b) => d.write(b), chunks);
    d.end();
    return { events };
  } catch (e) {
    if (!(e instanceof GatewayError)) throw e;
    return { events, error: e };
  }
}

describe('AWS event-stream decoder (src/upstream/aws-event-stream.ts)', () => {
  it(
    'any chunking of a valid stream decodes to the frames it was written from',
    () => {
      check(
        fc.property(fc.array(awsSpec, { minLength: 1, maxLength: 6 }), cuts, (specs, at) => {
          const bytes = concat(specs.map(awsFrame));
          const whole = decodeAws([bytes]);
          expect(whole.error).toBeUndefined();
          expect(whole.events).toHaveLength(specs.length);
          specs.forEach((s, i) => {
            const e = whole.events[i]!;
            if (s.kind === 'event') expect(e).toEqual({ event: s.type, data: s.payload });
            else {
              expect(e.event).toBe('error');
              expect(JSON.parse(e.data).type).toBe(s.type);
            }
          });
          expect(decodeAws(cut(bytes, at))).toEqual(whole);
        }),
        { runs: 300 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'arbitrary bytes (noise, or valid frames with bytes flipped or cut) give events or a typed error, the same in any chunking',
    () => {
      const damaged = fc
        .tuple(fc.array(awsSpec, { minLength: 1, maxLength: 3 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }), fc.option(fc.nat()))
        .map(([specs, flips, truncate]) => {
          const b = Uint8Array.from(concat(specs.map(awsFrame)));
          for (const [at, v] of flips) b[at % b.length] = v;
          return truncate === null ? b : b.subarray(0, truncate % (b.length + 1));
        });
      check(
        fc.property(fc.oneof(fc.uint8Array({ maxLength: 300 }), damaged), cuts, (bytes, at) => {
          const whole = decodeAws([bytes]); // throws (failing the property) on anything but a GatewayError
          // A damaged length prefix can claim a frame over the event cap: refused before it is buffered.
          if (whole.error) expect(['upstream_invalid_response', 'stream_interrupted', 'upstream_response_too_large']).toContain(whole.error.code);
          const chunked = decodeAws(cut(bytes, at));
          // Chunking may only change where a bad frame is noticed, never what decodes before it.
          expect(chunked.events).toEqual(whole.events);
          expect(chunked.error?.code).toBe(whole.error?.code);
        }),
        { runs: 400 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
