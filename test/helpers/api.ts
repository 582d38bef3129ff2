/** A management API call through a real socket (not a test file itself). */
import { request } from 'undici';
import { EXCHANGE_TIMEOUT_MS } from './http.js';
import { jsonOrUndefined } from './json.js';

export interface ApiReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any;
  text: string;
}

/**
 * `method path` on `base` with the gateway key `key` (none when undefined); an object body is sent as
 * JSON, a string body as it is (with `headers` overriding the content type).
 */
export async function callApi(
  base: string,
  method: string,
  path: string,
  key: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiReply> {
  const h: Record<string, string> = { ...headers };
  if (key) h['x-gateway-api-key'] = key;
  if (body !== undefined) h['content-type'] ??= 'application/json';
  const res = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: h,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    headersTimeout: EXCHANGE_TIMEOUT_MS,
    bodyTimeout: EXCHANGE_TIMEOUT_MS,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, json: jsonOrUndefined(text), text };
}
