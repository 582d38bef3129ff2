/**
 * The open-model load of an experiment: a seeded schedule of arrivals (Poisson at the declared rate,
 * each streamed or not, each with its prompt), the same for every config, and its sending. A request
 * is sent at its time whatever the answers before it take, and its latency counts from that time,
 * so a slow gateway cannot slow its own load down (no coordinated omission).
 */
import { Pool } from 'undici';
import { API_KEY } from '../scenario.js';
import { exponential, hash32, mulberry32, zipf, type Rng } from './random.js';
import { REQUEST_HEADER, type Experiment } from './schema.js';

export interface Arrival {
  id: string;
  /** When it is sent, ms after the run starts. */
  atMs: number;
  stream: boolean;
  prompt: string;
}

/** What one client request got. */
export interface Outcome {
  id: string;
  /** Its arrival time, s after the run started. */
  t: number;
  stream: boolean;
  /** The HTTP status; 0 when there was none (transport error, timeout). */
  status: number;
  /** A 200 with a whole answer (a stream ending in [DONE], no error event). */
  ok: boolean;
  /** From its arrival time to the end of the answer. */
  ms: number;
  /** The target that answered (x-gateway-target), if any. */
  target: string | null;
  cache: string | null;
  /** Its cost in USD as the gateway's log line states it (every upstream attempt that answered, priced); null without a price. */
  cost: number | null;
  /** Upstream calls made for it, from the fake providers' call log. */
  calls: number;
  error?: string;
}

const WORDS = 'apple river stone cloud ember maple quartz falcon harbor lantern meadow copper violet thunder glacier saffron orchard canyon beacon willow cobalt prairie summit tundra velvet marble cedar coral dune fern grove ivory jade lotus'.split(' ');

/** Prompt k of a Zipf mix: eight seeded words, so two prompts share few of them (the semantic cache must tell them apart). */
export function promptText(seed: number, k: number, reworded: boolean): string {
  const rng = mulberry32(hash32(seed, 'prompt', k));
  const words = Array.from({ length: 8 }, () => WORDS[Math.floor(rng() * WORDS.length)]!);
  const text = `Tell me about ${words.join(' ')} (${k})`;
  return reworded ? `${text.toUpperCase()}?!` : `${text}.`;
}

/** The arrivals of one run: the same for every config and repetition of an experiment. */
export function schedule(e: Experiment): Arrival[] {
  const rng: Rng = mulberry32(hash32(e.seed, 'arrivals'));
  const pick = e.load.prompts ? zipf(e.load.prompts.distinct, e.load.prompts.zipf_s) : undefined;
  const out: Arrival[] = [];
  const end = e.load.duration_s * 1000;
  for (let t = exponential(1000 / e.load.rate_per_s, rng), i = 0; t < end; t += exponential(1000 / e.load.rate_per_s, rng), i++) {
    const stream = rng() < e.load.stream_share;
    const id = `r${i}`;
    const prompt = pick ? promptText(e.seed, pick(rng), rng() < e.load.prompts!.rewordings) : `Request ${id}: answer briefly.`;
    out.push({ id, atMs: t, stream, prompt });
  }
  return out;
}

const header = (h: Record<string, string | string[] | undefined>, name: string): string | null => {
  const v = h[name];
  return v === undefined ? null : Array.isArray(v) ? v.join(',') : v;
};

async function sendOne(pool: Pool, a: Arrival, config: string, t0: number, timeoutMs: number): Promise<Outcome> {
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: a.prompt }], ...(a.stream ? { stream: true } : {}) });
  const base = { id: a.id, t: a.atMs / 1000, stream: a.stream, calls: 0 };
  try {
    const res = await pool.request({
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': API_KEY, 'x-gateway-config': config, 'x-gateway-trace-id': a.id, [REQUEST_HEADER]: a.id },
      body,
      signal: AbortSignal.timeout(Math.max(1, Math.round(t0 + a.atMs + timeoutMs - performance.now()))),
    });
    const text = await res.body.text();
    const ok = res.statusCode === 200 && (!a.stream || (text.includes('data: [DONE]') && !text.includes('event: error')));
    return { ...base, status: res.statusCode, ok, ms: performance.now() - t0 - a.atMs, target: header(res.headers, 'x-gateway-target'), cache: header(res.headers, 'x-gateway-cache-status'), cost: null };
  } catch (e) {
    return { ...base, status: 0, ok: false, ms: performance.now() - t0 - a.atMs, target: null, cache: null, cost: null, error: (e as Error).name === 'TimeoutError' ? 'timeout' : (e as Error).message };
  }
}

/** Sends every arrival at its time to the gateway on `port` with this config; `tick(elapsedS)` once a second. */
export async function runLoad(arrivals: readonly Arrival[], o: { port: number; config: string; timeoutS: number; tick?: (elapsedS: number) => void }): Promise<Outcome[]> {
  const pool = new Pool(`http://127.0.0.1:${o.port}`, { connections: 1024, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
  const t0 = performance.now();
  const ticker = setInterval(() => o.tick?.((performance.now() - t0) / 1000), 1000);
  const pending: Promise<Outcome>[] = [];
  try {
    for (const a of arrivals) {
      const wait = t0 + a.atMs - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(sendOne(pool, a, o.config, t0, o.timeoutS * 1000));
    }
    return await Promise.all(pending);
  } finally {
    clearInterval(ticker);
    await pool.close();
  }
}
