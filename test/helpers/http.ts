/**
 * HTTP exchanges with a gateway under test, read whole (not a test file itself). Every call is
 * bounded: a gateway that hangs fails the test with a timeout, never stalls the run.
 */
import { request } from 'undici';
import { jsonOrUndefined } from './json.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, else undefined. */
  json: any;
  /** x-gateway-cache-status */
  cacheStatus: string | undefined;
  /** Wall time of the exchange, ms. */
  ms: number;
}

/** Bound on any one exchange with a gateway in these tests. */
export const EXCHANGE_TIMEOUT_MS = 5000;

/** POST `body` (JSON-encoded unless a string) and read the whole answer. */
export async function post(url: string, headers: Record<string, string>, body: unknown): Promise<Answer> {
  const started = performance.now();
  const res = await request(url, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headersTimeout: EXCHANGE_TIMEOUT_MS,
    bodyTimeout: EXCHANGE_TIMEOUT_MS,
  });
  const text = await res.body.text();
  const json = jsonOrUndefined(text);
  const cs = res.headers['x-gateway-cache-status'];
  return {
    status: res.statusCode,
    headers: res.headers,
    text,
    json,
    cacheStatus: Array.isArray(cs) ? cs[0] : cs,
    ms: performance.now() - started,
  };
}

export async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await request(url, { headersTimeout: EXCHANGE_TIMEOUT_MS, bodyTimeout: EXCHANGE_TIMEOUT_MS });
  return { status: res.statusCode, text: await res.body.text() };
}

/** A management API's answer: status, headers, the body as text and parsed as JSON (else undefined). */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any;
  text: string;
}

/**
 * One call to a management API (`/v1/guardrails`, `/v1/prompts`, ...) with the gateway key `key`
 * (none when undefined): `body` is JSON-encoded unless it is a string.
 */
export async function callApi(base: string, method: string, path: string, key: string | undefined, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
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
