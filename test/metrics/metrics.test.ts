/**
 * GET /metrics after real traffic (success, fallback, retry, open circuit, stream): every metric is
 * there with the right labels, no secret or user data leaks into a label, the target label cap holds,
 * and the exposition passes `promtool check metrics` when promtool is installed.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PrometheusTelemetry } from '../../src/metrics/prometheus.js';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { chat, PROVIDER_KEY, STREAM_CHAT, target } from '../routing/helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const CHAT_PATH = '/v1/chat/completions';
const META_SECRET = 'meta-secret-value-4242';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (as prom-client writes it) into samples. */
function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/g;
      let lm: RegExpExecArray | null;
      while ((lm = re.exec(m[2])) !== null) labels[lm[1]!] = lm[2]!.replace(/\\"/g, '"').replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
    }
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** Samples of `name` whose labels include every pair in `match`. */
function find(samples: Sample[], name: string, match: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

function value(samples: Sample[], name: string, match: Record<string, string>): number {
  const found = find(samples, name, match);
  if (found.length !== 1) throw new Error(`expected one sample ${name}${JSON.stringify(match)}, found ${found.length}`);
  return found[0]!.value;
}

let gw: TestGateway;
let a: FakeOpenAI;
let b: FakeOpenAI;
const traces: string[] = [];
/** Proxied requests sent (each records one request duration and one overhead observation). */
let sent = 0;

async function send(config: unknown, opts: { body?: unknown } = {}) {
  const trace = `trace-${randomUUID()}`;
  traces.push(trace);
  sent++;
  return chat(gw, config, {
    ...opts,
    headers: { 'x-gateway-trace-id': trace, 'x-gateway-metadata': JSON.stringify({ user: META_SECRET }) },
  });
}

async function scrape(): Promise<{ status: number; contentType: string; text: string }> {
  const res = await request(`${gw.url}/metrics`); // no gateway key
  return { status: res.statusCode, contentType: String(res.headers['content-type']), text: await res.body.text() };
}

beforeAll(async () => {
  [a, b] = await Promise.all([FakeOpenAI.start(), FakeOpenAI.start()]);
  gw = await startGateway();

  // success (named target)
  expect((await send(target(a, { name: 'primary' }))).status).toBe(200);
  // fallback: the unnamed first target fails, the named second answers
  b.enqueue(CHAT_PATH, openAIError(503, 'down'));
  const fb = await send({ name: 'fb', strategy: { mode: 'fallback' }, targets: [target(b), target(a, { name: 'backup' })] });
  expect(fb.headers['x-gateway-target']).toBe('config.targets[1]');
  // retry
  a.enqueue(CHAT_PATH, { ...openAIError(503, 'down'), headers: { 'retry-after-ms': '1' } });
  const rt = await send(target(a, { name: 'retrier', retry: { attempts: 1, use_retry_after_headers: true } }));
  expect(rt.headers['x-gateway-retry-attempt-count']).toBe('1');
  // breaker: one 500 opens it (threshold 1), the next is refused
  const fragile = target(b, { name: 'fragile', cb_config: { failure_threshold: 1, cooldown_interval: 600_000 } });
  b.enqueue(CHAT_PATH, openAIError(500, 'boom'));
  expect((await send(fragile)).status).toBe(500);
  expect((await send(fragile)).status).toBe(503);
  // stream
  const st = await send(target(a, { name: 'streamer' }), { body: { ...STREAM_CHAT, stream_options: { include_usage: true } } });
  expect(st.text.endsWith('data: [DONE]\n\n')).toBe(true);
});

afterAll(async () => {
  await gw?.close();
  await a?.close();
  await b?.close();
});

describe('GET /metrics', () => {
  it('answers Prometheus text without a gateway key', async () => {
    const m = await scrape();
    expect(m.status).toBe(200);
    expect(m.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.text).toContain('# TYPE sluice_target_requests_total counter');
  });

  it('has every metric, with the expected labels and values', async () => {
    // The request metrics are written on the response's close: wait until all are in.
    const samples = await vi.waitFor(
      async () => {
        const s = parseMetrics((await scrape()).text);
        const n = find(s, 'sluice_request_duration_seconds_count').reduce((x, y) => x + y.value, 0);
        if (n < sent) throw new Error(`${n} of ${sent} requests recorded`);
        return s;
      },
      { timeout: 5000, interval: 10 },
    );

    // Upstream attempts per target, outcome and status class.
    const req = 'sluice_target_requests_total';
    expect(value(samples, req, { target: 'primary', provider: 'openai', endpoint: 'chat', outcome: 'success', status_class: '2xx' })).toBe(1);
    expect(value(samples, req, { target: 'config.targets[0]', provider: 'openai', outcome: 'error', status_class: '5xx' })).toBe(1);
    expect(value(samples, req, { target: 'backup', outcome: 'success', status_class: '2xx' })).toBe(1);
    expect(value(samples, req, { target: 'retrier', outcome: 'error', status_class: '5xx' })).toBe(1);
    expect(value(samples, req, { target: 'retrier', outcome: 'success', status_class: '2xx' })).toBe(1);
    expect(value(samples, req, { target: 'fragile', outcome: 'error', status_class: '5xx' })).toBe(1);
    // The refused request never reached the upstream: no attempt is counted for it.
    expect(find(samples, req, { target: 'fragile' }).reduce((x, y) => x + y.value, 0)).toBe(1);
    expect(value(samples, req, { target: 'streamer', outcome: 'success', status_class: '2xx' })).toBe(1);

    // Operation duration histogram (OpenTelemetry GenAI names).
    const dur = 'gen_ai_client_operation_duration_seconds';
    expect(value(samples, `${dur}_count`, { target: 'primary', gen_ai_system: 'openai', gen_ai_operation_name: 'chat', outcome: 'success' })).toBe(1);
    expect(find(samples, `${dur}_bucket`, { target: 'primary', le: '+Inf' })[0]!.value).toBe(1);
    expect(value(samples, `${dur}_sum`, { target: 'primary', outcome: 'success' })).toBeGreaterThan(0);

    // Time to first token: only the stream has one.
    const ttft = 'gen_ai_server_time_to_first_token_seconds';
    expect(value(samples, `${ttft}_count`, { target: 'streamer', gen_ai_system: 'openai', gen_ai_operation_name: 'chat' })).toBe(1);
    expect(find(samples, `${ttft}_count`, { target: 'primary' })).toHaveLength(0);

    // Tokens, input and output.
    const tok = 'gen_ai_client_token_usage_total';
    expect(value(samples, tok, { target: 'primary', gen_ai_system: 'openai', gen_ai_token_type: 'input' })).toBeGreaterThan(0);
    expect(value(samples, tok, { target: 'primary', gen_ai_token_type: 'output' })).toBeGreaterThan(0);
    expect(value(samples, tok, { target: 'streamer', gen_ai_token_type: 'input' })).toBe(10);
    expect(value(samples, tok, { target: 'streamer', gen_ai_token_type: 'output' })).toBe(2);

    // Retries, fallbacks.
    expect(value(samples, 'sluice_target_retries_total', { target: 'retrier', provider: 'openai' })).toBe(1);
    expect(find(samples, 'sluice_target_retries_total', { target: 'primary' })).toHaveLength(0);
    expect(value(samples, 'sluice_fallbacks_total', { node: 'fb', from: 'config.targets[0]' })).toBe(1);

    // Circuit state and transitions.
    expect(value(samples, 'sluice_circuit_state', { target: 'fragile', state: 'open' })).toBe(1);
    expect(value(samples, 'sluice_circuit_state', { target: 'fragile', state: 'closed' })).toBe(0);
    expect(value(samples, 'sluice_circuit_state', { target: 'fragile', state: 'half-open' })).toBe(0);
    expect(value(samples, 'sluice_circuit_transitions_total', { target: 'fragile', from: 'closed', to: 'open' })).toBe(1);
    // The transitions it has not made are there at 0 (so rate() sees their first one).
    for (const [from, to] of [['open', 'half-open'], ['half-open', 'closed'], ['half-open', 'open']]) {
      expect(find(samples, 'sluice_circuit_transitions_total', { target: 'fragile', from: from!, to: to! }).map((x) => x.value)).toEqual([0]);
    }

    // Usage-limit counter errors: both outcomes there at 0 before any (they come in bursts).
    expect(find(samples, 'sluice_usage_limit_store_errors_total').map((x) => [x.labels.outcome, x.value])).toEqual([
      ['admitted', 0],
      ['refused', 0],
    ]);

    // Nothing in flight any more.
    const inFlight = find(samples, 'sluice_target_in_flight_requests');
    expect(inFlight.length).toBeGreaterThan(0);
    expect(inFlight.filter((s) => s.value !== 0)).toEqual([]);

    // Whole request and gateway overhead.
    const reqDur = 'sluice_request_duration_seconds_count';
    expect(value(samples, reqDur, { endpoint: 'chat', status_class: '2xx' })).toBe(sent - 2);
    expect(value(samples, reqDur, { endpoint: 'chat', status_class: '5xx' })).toBe(2);
    expect(value(samples, 'sluice_gateway_overhead_seconds_count', { endpoint: 'chat' })).toBe(sent);
    expect(find(samples, 'sluice_gateway_overhead_seconds_bucket', { endpoint: 'chat', le: '+Inf' })[0]!.value).toBe(sent);
  });

  it('target labels are the name when set, else the JSON path', async () => {
    const samples = parseMetrics((await scrape()).text);
    const targets = new Set(find(samples, 'sluice_target_requests_total').map((s) => s.labels.target));
    expect([...targets].sort()).toEqual(['backup', 'config.targets[0]', 'fragile', 'primary', 'retrier', 'streamer']);
  });

  it('no label value carries the provider key, a trace id or metadata values', async () => {
    const { text } = await scrape();
    const samples = parseMetrics(text);
    const values = samples.flatMap((s) => Object.values(s.labels));
    expect(values.length).toBeGreaterThan(0);
    expect(traces).toHaveLength(sent);
    for (const v of values) {
      expect(v).not.toContain(PROVIDER_KEY);
      expect(v).not.toContain(META_SECRET);
      for (const t of traces) expect(v).not.toContain(t);
    }
    // Nowhere in the text either (HELP lines included).
    expect(text).not.toContain(PROVIDER_KEY);
    expect(text).not.toContain(META_SECRET);
  });

  it('passes promtool check metrics', async (ctx) => {
    const which = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    if (which.error) {
      ctx.skip(true, 'promtool is not on PATH (Debian package "prometheus" provides it): skipping `promtool check metrics`');
      return;
    }
    const { text } = await scrape();
    // The default Node.js metrics are part of what is checked.
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(text).toContain('# TYPE nodejs_active_handles gauge');
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('target label cap', () => {
  it('distinct target labels beyond the cap are reported as "other"', async () => {
    const t = new PrometheusTelemetry(2, false);
    for (const name of ['t1', 't2', 't3', 't4', 't5']) {
      const labels = { target: name, provider: 'openai', endpoint: 'chat' as const };
      t.targetStarted(labels);
      t.targetFinished(labels, 'success', 200, 0.01);
      t.retry(labels);
    }
    const samples = parseMetrics(await t.registry.metrics());
    const req = find(samples, 'sluice_target_requests_total');
    expect(Object.fromEntries(req.map((s) => [s.labels.target, s.value]))).toEqual({ t1: 1, t2: 1, other: 3 });
    const retries = find(samples, 'sluice_target_retries_total');
    expect(Object.fromEntries(retries.map((s) => [s.labels.target, s.value]))).toEqual({ t1: 1, t2: 1, other: 3 });
    // In flight went up and down under the same label: all back to 0.
    expect(find(samples, 'sluice_target_in_flight_requests').map((s) => [s.labels.target, s.value])).toEqual([
      ['t1', 0],
      ['t2', 0],
      ['other', 0],
    ]);
    // Without default metrics: only ours.
    expect(samples.some((s) => s.name.startsWith('process_') || s.name.startsWith('nodejs_'))).toBe(false);
  });
});

describe('check verdicts', () => {
  it('a verdict series appears when that verdict first happens, counted per check id', async () => {
    const t = new PrometheusTelemetry(10, false);
    t.check('default.wordCount', 'pass', 0.001);
    t.check('default.wordCount', 'pass', 0.001);
    t.check('default.contains', 'fail', 0.001);
    const verdicts = find(parseMetrics(await t.registry.metrics()), 'sluice_check_verdicts_total');
    expect(verdicts.map((s) => [s.labels.check, s.labels.verdict, s.value]).sort()).toEqual([
      ['default.contains', 'fail', 1],
      ['default.wordCount', 'pass', 2],
    ]);
  });
});
