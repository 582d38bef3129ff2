/**
 * Small HTTP helpers shared by the cache, scale and fault integration tests (not a test file itself).
 * Every call is bounded: a gateway that hangs fails the test with a timeout, never stalls the run.
 */
import { request } from 'undici';
import { jsonOrUndefined } from '../helpers/json.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
  /** x-gateway-cache-status */
  cacheStatus: string | undefined;
  /** Wall time of the exchange, ms. */
  ms: number;
}

/** Bound on any one exchange with a gateway in these tests. */
export const EXCHANGE_TIMEOUT_MS = 5000;

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

/** A chat body with one user message (and optional system prompt / other fields). */
export function chatBody(content: string, extra: Record<string, unknown> = {}, system?: string): Record<string, unknown> {
  const messages = system === undefined ? [{ role: 'user', content }] : [{ role: 'system', content: system }, { role: 'user', content }];
  return { model: 'gpt-4o-mini', messages, ...extra };
}

export { chatContent, parseSse, type SseFrame } from '../helpers/sse.js';

// ------------------------------------------------------------------------------------------------
// Prometheus text

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text exposition (no escapes inside label values are needed here). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const lm of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[lm[1]!] = lm[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** Sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export function metricSum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

export async function scrape(baseUrl: string): Promise<Sample[]> {
  const r = await get(`${baseUrl}/metrics`);
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
  return parseMetrics(r.text);
}

/** Poll `check` every `intervalMs` until it returns a value other than undefined/false, at most `timeoutMs`. */
export async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 5000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
