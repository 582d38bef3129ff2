import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([\w-]+)"?/i;

/**
 * Read a JSON request body: the content type must be JSON (415), the size at most `limit` bytes
 * (413, checked on Content-Length before reading and while reading), the text valid UTF-8 JSON (400).
 * Parsed once; a body that is not JSON is never buffered past the limit.
 */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const type = req.headers['content-type'];
  if (!type || !JSON_TYPE.test(type)) {
    return Promise.reject(new GatewayError('unsupported_media_type'));
  }
  const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    return Promise.reject(new GatewayError('unsupported_media_type', 'The request body must be UTF-8 JSON.'));
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (b: Buffer) => {
      if (failed) return;
      size += b.length;
      if (size > limit) {
        failed = true;
        reject(tooLarge(limit));
        return;
      }
      parts.push(b);
    });
    req.on('end', () => {
      if (failed) return;
      if (size === 0) return reject(new GatewayError('invalid_json', 'The request body is empty.'));
      const text = parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts, size).toString('utf8');
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new GatewayError('invalid_json'));
      }
    });
    req.on('error', () => {
      if (failed) return;
      failed = true;
      reject(new GatewayError('invalid_request_body', 'The request body ended before its declared length.'));
    });
  });
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError('body_too_large', `The request body is larger than the limit of ${limit} bytes.`);
}
