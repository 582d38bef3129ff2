import { GatewayError } from '../errors/gateway-error.js';
import { upstreamTooLarge } from './limits.js';

/** The prelude (total length, headers length, prelude CRC); a message is at least 16 bytes. */
const PRELUDE = 12;
const MIN_MESSAGE = 16;

/**
 * Bytes of an `application/vnd.amazon.eventstream` body → whole frames, each handed to `onFrame` as
 * soon as its `total length` bytes are there: a frame split across writes is held until it is whole,
 * and every whole frame in one write is handed on (frames coalesced in one write). The bytes of a
 * frame are not checked here (the codec checks both CRCs); only its declared length is: an impossible
 * one is `upstream_invalid_response`, one over `maxFrame` is `upstream_response_too_large`, refused
 * from the prelude before the frame is buffered. Bytes left over at the end are `stream_interrupted`.
 */
export class AwsFrameSplitter {
  /**
   * Bytes of a frame not yet complete, as they arrived (each a copy: the caller may reuse its
   * buffer), `held` of them in all. They are joined once, when the frame is whole: joining on every
   * write would copy a large frame sent in many small writes over and over (quadratic).
   */
  private parts: Uint8Array[] = [];
  private held = 0;
  /** The total length of the frame being held, once its prelude is in (0 before). */
  private need = 0;

  constructor(
    private readonly onFrame: (frame: Uint8Array) => void,
    private readonly maxFrame: number,
  ) {}

  write(chunk: Uint8Array): void {
    if (this.held === 0) return this.drain(chunk, false);
    this.parts.push(Uint8Array.prototype.slice.call(chunk));
    this.held += chunk.byteLength;
    if (this.need === 0 && this.held >= PRELUDE) this.need = this.totalOf(this.heldPrelude());
    if (this.need === 0 || this.held < this.need) return;
    const joined = new Uint8Array(this.held);
    let at = 0;
    for (const p of this.parts) {
      joined.set(p, at);
      at += p.byteLength;
    }
    this.reset();
    this.drain(joined, true);
  }

  end(): void {
    if (this.held === 0) return;
    this.reset();
    throw new GatewayError('stream_interrupted', 'The provider stream ended inside an event-stream frame.');
  }

  private reset(): void {
    this.parts = [];
    this.held = 0;
    this.need = 0;
  }

  /** The total length a prelude declares, checked before anything more of the frame is kept. */
  private totalOf(prelude: Uint8Array): number {
    const total = new DataView(prelude.buffer, prelude.byteOffset, PRELUDE).getUint32(0, false);
    if (total < MIN_MESSAGE) {
      throw new GatewayError('upstream_invalid_response', `The provider sent an event-stream frame of impossible length ${total}.`);
    }
    if (total > this.maxFrame) throw upstreamTooLarge('event-stream frame', this.maxFrame);
    return total;
  }

  /** The first PRELUDE bytes held (they may span parts). */
  private heldPrelude(): Uint8Array {
    if (this.parts[0]!.byteLength >= PRELUDE) return this.parts[0]!;
    const out = new Uint8Array(PRELUDE);
    let at = 0;
    for (const p of this.parts) {
      const n = Math.min(p.byteLength, PRELUDE - at);
      out.set(p.subarray(0, n), at);
      if ((at += n) === PRELUDE) break;
    }
    return out;
  }

  /** Hands on every whole frame in `buf` and holds the rest (copied unless `owned`: a buffer made here). */
  private drain(buf: Uint8Array, owned: boolean): void {
    let offset = 0;
    while (buf.byteLength - offset >= PRELUDE) {
      const total = this.totalOf(buf.subarray(offset, offset + PRELUDE));
      if (buf.byteLength - offset < total) {
        this.need = total;
        break;
      }
      this.onFrame(buf.subarray(offset, offset + total));
      offset += total;
    }
    if (offset < buf.byteLength) {
      // Uint8Array#slice copies (Buffer#slice would not)
      this.parts = [owned ? buf.subarray(offset) : Uint8Array.prototype.slice.call(buf, offset)];
      this.held = buf.byteLength - offset;
    }
  }
}
