/**
 * The fake providers of an experiment, in one process (pinned beside the load generator): each
 * provider answers OpenAI's chat completions under /<name>/v1/chat/completions, as JSON or SSE, with
 * the latency and the faults its plan gives (fault-plan.ts). The run controls it:
 *   POST /_reset  the clock starts again at 0 and the call log is emptied (before each run)
 *   GET  /_calls  the call log: [{p: provider, r: request, t: ms, o: outcome}]
 *
 *   EXP_FAKES=<file.json: {seed, providers}> EXP_PORT=<port> node --import tsx benchmarks/experiment/fakes.ts
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { serveUntilSignalled } from '../serve.js';
import { planCall, type CallPlan } from './fault-plan.js';
import { REQUEST_HEADER, type ProviderSpec } from './schema.js';

export interface Call {
  p: string;
  r: string;
  t: number;
  o: string;
}

const { seed, providers } = JSON.parse(readFileSync(process.env.EXP_FAKES!, 'utf8')) as { seed: number; providers: Record<string, ProviderSpec> };
/** Where each fresh gateway is warmed up before its run: fast, never faulted, outside the experiment. */
const WARMUP: ProviderSpec = { latency: { dist: 'fixed', ms: 1 }, error_rate: 0, error_status: 500, stream: { chunks: 5, interval_ms: 1, cut_rate: 0 }, model: 'gpt-4o-mini', faults: [] };
let t0 = performance.now();
let calls: Call[] = [];
let seen = new Map<string, number>();

const completion = (model: string): string =>
  JSON.stringify({
    id: 'chatcmpl-experiment',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'An answer from the fake provider.' }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 40, completion_tokens: 120, total_tokens: 160 },
  });
const chunk = (model: string, delta: Record<string, unknown>, finish: string | null, usage?: Record<string, number>): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-experiment', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;

function stream(res: http.ServerResponse, spec: ProviderSpec, cut: boolean, usage: boolean): void {
  const n = spec.stream.chunks;
  const parts = Array.from({ length: n }, (_, i) => chunk(spec.model, i === 0 ? { role: 'assistant', content: '' } : i === n - 1 ? {} : { content: ` t${i}` }, i === n - 1 ? 'stop' : null));
  if (usage) parts.push(chunk(spec.model, {}, null, { prompt_tokens: 40, completion_tokens: 120, total_tokens: 160 }));
  parts.push('data: [DONE]\n\n');
  const stopAt = cut ? Math.floor(n / 2) : parts.length;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (i >= stopAt) return void (cut ? res.destroy() : res.end());
    res.write(parts[i++]!);
    timer = setTimeout(next, spec.stream.interval_ms);
  };
  let timer = setTimeout(next, 0);
  res.on('close', () => clearTimeout(timer));
}

function carryOut(res: http.ServerResponse, plan: CallPlan, spec: ProviderSpec, body: string): void {
  if (plan.kind === 'reset') return void res.socket?.destroy();
  if (plan.kind === 'status') {
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
    if (plan.retryAfterS !== undefined) headers['retry-after'] = String(plan.retryAfterS);
    res.writeHead(plan.status, headers);
    return void res.end(JSON.stringify({ error: { message: `fake provider: ${plan.status}`, type: plan.status === 429 ? 'rate_limit_error' : 'server_error' } }));
  }
  const timer = setTimeout(() => {
    if (res.destroyed) return;
    if (/"stream"\s*:\s*true/.test(body)) return stream(res, spec, plan.cut, /"include_usage"\s*:\s*true/.test(body));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completion(spec.model));
  }, plan.latencyMs);
  res.on('close', () => clearTimeout(timer));
}

function onCall(req: http.IncomingMessage, res: http.ServerResponse, name: string, spec: ProviderSpec, body: string): void {
  const t = performance.now() - t0;
  const header = req.headers[REQUEST_HEADER];
  const key = typeof header === 'string' ? header : createHash('sha256').update(body).digest('hex').slice(0, 16);
  const k = `${name}\u0001${key}`;
  const occurrence = seen.get(k) ?? 0;
  seen.set(k, occurrence + 1);
  const plan = planCall(seed, name, spec, key, occurrence, t / 1000);
  calls.push({ p: name, r: key, t: Math.round(t), o: plan.kind === 'answer' ? (plan.cut ? 'cut' : 'ok') : plan.kind === 'reset' ? 'reset' : String(plan.status) });
  carryOut(res, plan, spec, body);
}

const ROUTE = /^\/(_?[a-z][a-z0-9_-]*)\/v1\/chat\/completions$/;
const server = http.createServer((req, res) => {
  if (req.url === '/_reset' && req.method === 'POST') {
    [t0, calls, seen] = [performance.now(), [], new Map()];
    return void res.writeHead(204).end();
  }
  if (req.url === '/_calls') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(calls));
  const m = ROUTE.exec(req.url ?? '');
  const spec = m ? (m[1] === '_warmup' ? WARMUP : providers[m[1]!]) : undefined;
  if (req.method !== 'POST' || !spec) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => onCall(req, res, m![1]!, spec, Buffer.concat(parts).toString('utf8')));
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 125_000;
server.requestTimeout = 0;

serveUntilSignalled(server, Number(process.env.EXP_PORT ?? 0), '127.0.0.1');
