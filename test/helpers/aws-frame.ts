import { crc32 } from 'node:zlib';

/**
 * One AWS event-stream frame, built by hand from the wire description (big-endian lengths, CRC-32
 * of the prelude, CRC-32 of everything before the message CRC; string headers are type 7), not with
 * the codec the decoder uses, so a shared misreading cannot make both sides agree.
 */
export function awsEventFrame(headers: Record<string, string>, payload: string | Uint8Array): Buffer {
  const hs: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name, 'utf8');
    const v = Buffer.from(value, 'utf8');
    const h = Buffer.alloc(4 + n.length + v.length);
    h.writeUInt8(n.length, 0);
    n.copy(h, 1);
    h.writeUInt8(7, 1 + n.length);
    h.writeUInt16BE(v.length, 2 + n.length);
    v.copy(h, 4 + n.length);
    hs.push(h);
  }
  const headerBytes = Buffer.concat(hs);
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload);
  const total = 12 + headerBytes.length + body.length + 4;
  const out = Buffer.alloc(total);
  out.writeUInt32BE(total, 0);
  out.writeUInt32BE(headerBytes.length, 4);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  headerBytes.copy(out, 12);
  body.copy(out, 12 + headerBytes.length);
  out.writeUInt32BE(crc32(out.subarray(0, total - 4)), total - 4);
  return out;
}
