import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../util/json-depth.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([\w-]+)"?/i;

export type BodyCallback = (err: GatewayError | undefined, body?: unknown) => void;

/**
 * Read a JSON request body: the content type must be JSON (415), the size at most `limit` bytes
 * (413, checked on Content-Length before reading and while reading), the text valid UTF-8 JSON (400)
 * nested at most MAX_JSON_DEPTH deep (400 json_too_deep).
 * Parsed once; a body that is not JSON is never buffered past the limit. A callback, not a promise:
 * this runs on every request and the continuation needs no extra microtask.
 */
export function readJsonBody(req: IncomingMessage, limit: number, done: BodyCallback): void {
  const type = req.headers['content-type'];
  if (!type || !JSON_TYPE.test(type)) return done(new GatewayError('unsupported_media_type'));
  const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    return done(new GatewayError('unsupported_media_type', 'The request body must be UTF-8 JSON.'));
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    return done(tooLarge(limit));
  }
  let parts: Buffer[] = [];
  let size = 0;
  let finished = false;
  // The listeners stay on `req`, which its kept-alive socket holds until the next request: once the
  // body is read they must reach nothing (not the callback, not the chunks), or everything the
  // callback leads to outlives the request and is promoted to the old generation.
  let callback: BodyCallback | undefined = done;
  const finish = (err: GatewayError | undefined, body?: unknown): void => {
    if (finished) return;
    finished = true;
    parts = [];
    const cb = callback!;
    callback = undefined;
    cb(err, body);
  };
  req.on('data', (b: Buffer) => {
    if (finished) return;
    size += b.length;
    if (size > limit) return finish(tooLarge(limit));
    parts.push(b);
  });
  req.on('end', () => {
    if (finished) return;
    if (size === 0) return finish(new GatewayError('invalid_json', 'The request body is empty.'));
    const text = parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts, size).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return finish(new GatewayError('invalid_json'));
    }
    if (jsonTooDeep(body)) return finish(new GatewayError('json_too_deep', `The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`));
    finish(undefined, body);
  });
  req.on('error', () => finish(new GatewayError('invalid_request_body', 'The request body ended before its declared length.')));
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError('body_too_large', `The request body is larger than the limit of ${limit} bytes.`);
}
