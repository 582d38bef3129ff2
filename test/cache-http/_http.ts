/**
 * Small HTTP helpers shared by the cache, scale and fault integration tests (not a test file itself);
 * the exchanges themselves (post, get, Answer) are test/helpers/http.ts.
 */
import { get } from '../helpers/http.js';

export { EXCHANGE_TIMEOUT_MS, get, post, type Answer } from '../helpers/http.js';

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
