/**
 * The pixel size of an image sent inline (a `data:` URL, base64), read from its header: PNG, GIF,
 * WebP and JPEG. Only the first bytes are decoded (the estimate must stay cheap on a large image);
 * a size that is not found there, another format or a remote URL is unknown (undefined), and the
 * caller assumes the largest the token rules allow.
 */

export interface ImageSize {
  width: number;
  height: number;
}

/** Bytes of an image read at most: a JPEG's size follows its metadata segments, which are rarely longer. */
const HEAD_BYTES = 64 * 1024;

export function imageSize(url: string): ImageSize | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) return undefined;
  const chars = Math.ceil(HEAD_BYTES / 3) * 4;
  const head = Buffer.from(url.slice(comma + 1, comma + 1 + chars), 'base64');
  return png(head) ?? gif(head) ?? webp(head) ?? jpeg(head);
}

const positive = (width: number, height: number): ImageSize | undefined => (width > 0 && height > 0 ? { width, height } : undefined);

function png(b: Buffer): ImageSize | undefined {
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return positive(b.readUInt32BE(16), b.readUInt32BE(20));
}

function gif(b: Buffer): ImageSize | undefined {
  if (b.length < 10 || b.toString('latin1', 0, 4) !== 'GIF8') return undefined;
  return positive(b.readUInt16LE(6), b.readUInt16LE(8));
}

function webp(b: Buffer): ImageSize | undefined {
  if (b.length < 30 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WEBP') return undefined;
  switch (b.toString('latin1', 12, 16)) {
    case 'VP8X':
      return positive(b.readUIntLE(24, 3) + 1, b.readUIntLE(27, 3) + 1);
    case 'VP8L': {
      const bits = b.readUInt32LE(21);
      return positive((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
    }
    case 'VP8 ':
      return positive(b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
    default:
      return undefined;
  }
}

function jpeg(b: Buffer): ImageSize | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let i = 2;
  while (i + 9 <= b.length) {
    if (b[i] !== 0xff) return undefined;
    const m = b[i + 1]!;
    if (m === 0xff) {
      i++; // fill byte
      continue;
    }
    // start-of-frame markers (not DHT C4, JPG C8, DAC CC) carry the height, then the width
    if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) return positive(b.readUInt16BE(i + 7), b.readUInt16BE(i + 5));
    if (m === 0x01 || (m >= 0xd0 && m <= 0xd8)) {
      i += 2; // markers without a length
      continue;
    }
    i += 2 + b.readUInt16BE(i + 2);
  }
  return undefined;
}
