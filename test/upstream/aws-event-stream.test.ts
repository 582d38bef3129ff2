import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/providers/types.js';
import { createAwsEventStreamDecoder } from '../../src/upstream/aws-event-stream.js';
import { streamDecoder } from '../../src/upstream/framing.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { awsEventFrame as frame } from '../helpers/aws-frame.js';

const event = (type: string, payload: unknown): Buffer =>
  frame({ ':message-type': 'event', ':event-type': type, ':content-type': 'application/json' }, JSON.stringify(payload));

function decode(pieces: Uint8Array[]): StreamEvent[] {
  const out: StreamEvent[] = [];
  const d = createAwsEventStreamDecoder((e) => out.push(e));
  for (const p of pieces) d.write(p);
  d.end();
  return out;
}

const thrown = (f: () => void): GatewayError => {
  try {
    f();
  } catch (e) {
    return e as GatewayError;
  }
  throw new Error('did not throw');
};

const THREE = [
  event('messageStart', { role: 'assistant' }),
  event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'grüß 👋' } }),
  event('messageStop', { stopReason: 'end_turn' }),
];
const EXPECTED: StreamEvent[] = [
  { event: 'messageStart', data: '{"role":"assistant"}' },
  { event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"grüß 👋"}}' },
  { event: 'messageStop', data: '{"stopReason":"end_turn"}' },
];

describe('createAwsEventStreamDecoder', () => {
  it('decodes one frame per write into {event: :event-type, data: payload}', () => {
    expect(decode(THREE)).toEqual(EXPECTED);
  });

  it('decodes frames coalesced in one write', () => {
    expect(decode([Buffer.concat(THREE)])).toEqual(EXPECTED);
  });

  it('decodes frames split across writes, byte by byte (inside the prelude, headers and a UTF-8 character)', () => {
    const all = Buffer.concat(THREE);
    expect(decode(Array.from(all, (b) => Uint8Array.of(b)))).toEqual(EXPECTED);
  });

  it('decodes a large frame sent one byte a write (held pieces are joined once per frame, not on every write)', () => {
    // 256 KiB: joining on every write would copy about 32 GiB here
    const big = event('contentBlockDelta', { delta: { text: 'é'.repeat(128 * 1024) } });
    const stream = Buffer.concat([THREE[0]!, big, THREE[1]!, THREE[2]!]);
    const out: StreamEvent[] = [];
    const d = createAwsEventStreamDecoder((e) => out.push(e));
    const scratch = new Uint8Array(1);
    for (let i = 0; i < stream.length; i++) {
      scratch[0] = stream[i]!; // one buffer reused for every write, as a socket may
      d.write(scratch);
      if (i === THREE[0]!.length + big.length - 2) expect(out).toHaveLength(1); // the big frame waits for its last byte
    }
    d.end();
    expect(out).toEqual([EXPECTED[0], { event: 'contentBlockDelta', data: JSON.stringify({ delta: { text: 'é'.repeat(128 * 1024) } }) }, EXPECTED[1], EXPECTED[2]]);
  });

  it('decodes any mix of write sizes the same way, and the length checks still come from the prelude', () => {
    const all = Buffer.concat([...THREE, event('x', { pad: 'p'.repeat(3000) }), ...THREE]);
    const whole = decode([all]);
    for (const sizes of [[1, 2, 3], [11, 12, 13], [5, 100, 1], [4096], [7, 3001]]) {
      const pieces: Uint8Array[] = [];
      for (let at = 0, k = 0; at < all.length; k++) {
        const n = sizes[k % sizes.length]!;
        pieces.push(all.subarray(at, at + n));
        at += n;
      }
      expect(decode(pieces), JSON.stringify(sizes)).toEqual(whole);
    }
    // an oversized frame's prelude arriving a byte at a time is refused once its 12th byte is in
    const d = createAwsEventStreamDecoder(() => undefined, 1024);
    const prelude = Buffer.alloc(12);
    prelude.writeUInt32BE(4096, 0);
    for (let i = 0; i < 11; i++) d.write(prelude.subarray(i, i + 1));
    expect(thrown(() => d.write(prelude.subarray(11, 12))).code).toBe('upstream_response_too_large');
  });

  it('decodes a write that ends one frame, holds a second whole, and starts a third', () => {
    const all = Buffer.concat(THREE);
    const cut1 = THREE[0]!.length - 5;
    const cut2 = THREE[0]!.length + THREE[1]!.length + 7;
    const out: StreamEvent[] = [];
    const d = createAwsEventStreamDecoder((e) => out.push(e));
    d.write(all.subarray(0, cut1));
    expect(out).toEqual([]);
    d.write(all.subarray(cut1, cut2));
    expect(out).toEqual(EXPECTED.slice(0, 2));
    d.write(all.subarray(cut2));
    d.end();
    expect(out).toEqual(EXPECTED);
  });

  it('does not keep a reference to the caller’s buffer when a frame is incomplete', () => {
    const all = Buffer.concat(THREE);
    const out: StreamEvent[] = [];
    const d = createAwsEventStreamDecoder((e) => out.push(e));
    const scratch = Buffer.from(all.subarray(0, 20));
    d.write(scratch);
    scratch.fill(0); // undici may reuse it
    d.write(all.subarray(20));
    d.end();
    expect(out).toEqual(EXPECTED);
  });

  it('turns an exception frame into an `error` event carrying the exception type and the payload', () => {
    const exc = frame(
      { ':message-type': 'exception', ':exception-type': 'throttlingException', ':content-type': 'application/json' },
      '{"message":"Too many tokens, please wait."}',
    );
    expect(decode([THREE[0]!, exc])).toEqual([
      EXPECTED[0],
      { event: 'error', data: JSON.stringify({ message: 'Too many tokens, please wait.', type: 'throttlingException' }) },
    ]);
  });

  it('turns an error frame (:error-code, :error-message) into an `error` event', () => {
    const err = frame({ ':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'boom' }, '');
    expect(decode([err])).toEqual([{ event: 'error', data: JSON.stringify({ message: 'boom', type: 'InternalFailure' }) }]);
  });

  it('refuses a frame whose message CRC is wrong', () => {
    const bad = Buffer.from(THREE[1]!);
    bad[bad.length - 1] ^= 0xff;
    const e = thrown(() => decode([THREE[0]!, bad]));
    expect(e).toBeInstanceOf(GatewayError);
    expect(e.code).toBe('upstream_invalid_response');
  });

  it('refuses a frame whose prelude CRC is wrong', () => {
    const bad = Buffer.from(THREE[0]!);
    bad[9] ^= 0xff;
    expect(thrown(() => decode([bad])).code).toBe('upstream_invalid_response');
  });

  it('refuses an impossible length without buffering it', () => {
    const bad = Buffer.alloc(12);
    bad.writeUInt32BE(4, 0);
    expect(thrown(() => decode([bad])).code).toBe('upstream_invalid_response');
  });

  it('a body that ends inside a frame is stream_interrupted', () => {
    const all = Buffer.concat(THREE);
    expect(thrown(() => decode([all.subarray(0, all.length - 3)])).code).toBe('stream_interrupted');
  });

  it('is the decoder framing.ts picks for aws-event-stream and its content type', () => {
    const out: StreamEvent[] = [];
    const d = streamDecoder('aws-event-stream', { 'content-type': 'application/vnd.amazon.eventstream' }, (e) => out.push(e));
    expect(d).toBeDefined();
    d!.write(THREE[0]!);
    expect(out).toEqual([EXPECTED[0]]);
    expect(streamDecoder('aws-event-stream', { 'content-type': 'application/json' }, () => {})).toBeUndefined();
  });
});

describe('event-stream frame cap', () => {
  it('a frame that declares more than maxFrame bytes is upstream_response_too_large, from its prelude, before it is buffered', () => {
    const out: StreamEvent[] = [];
    const d = createAwsEventStreamDecoder((e) => out.push(e), 1024);
    d.write(event('chunk', { n: 1 }));
    expect(out).toHaveLength(1);
    const big = event('chunk', { text: 'x'.repeat(2000) });
    // only the prelude has arrived: refused already
    const e = thrown(() => d.write(big.subarray(0, 12)));
    expect(e.code).toBe('upstream_response_too_large');
    expect(e.status).toBe(502);
  });

  it('a frame at the cap is read', () => {
    const f = event('chunk', { text: 'y'.repeat(100) });
    const out: StreamEvent[] = [];
    const d = createAwsEventStreamDecoder((e) => out.push(e), f.length);
    d.write(f);
    d.end();
    expect(out).toHaveLength(1);
  });
});
