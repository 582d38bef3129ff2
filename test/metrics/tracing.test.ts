/**
 * OpenTelemetry tracing end to end: a gateway with --otlp-endpoint exports, through its egress, to a
 * real OTLP/HTTP receiver on port 0 (JSON), one SERVER span per request and one CLIENT span per
 * upstream attempt (a retry gives two), with the GenAI attributes and the gateway's own; a stream,
 * a cache hit and a guardrail denial too. Off by default: then no tracer is made or called.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { OtelTracing, otelTraceId } from '../../src/metrics/otel-tracing.js';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { CLIENT, OtlpReceiver, SERVER, type ReceivedSpan } from '../fakes/otlp-receiver.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { CHAT, chat, STREAM_CHAT, target } from '../routing/helpers.js';

const CHAT_PATH = '/v1/chat/completions';

let fake: FakeOpenAI;
let receiver: OtlpReceiver;
let gw: TestGateway;

beforeAll(async () => {
  [fake, receiver] = await Promise.all([FakeOpenAI.start(), OtlpReceiver.start()]);
  gw = await startGateway({ options: { 'otlp-endpoint': receiver.url, 'otlp-export-delay': '20' } });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([fake?.close(), receiver?.close()]);
});

const server = (spans: ReceivedSpan[]): ReceivedSpan => spans.find((s) => s.kind === SERVER)!;
const attempts = (spans: ReceivedSpan[]): ReceivedSpan[] =>
  spans.filter((s) => s.kind === CLIENT).sort((x, y) => Number(x.attributes['sluice.attempt']) - Number(y.attributes['sluice.attempt']));
/** Waits for the request span and `n` attempt spans of the trace. */
const trace = (id: string, n: number) => receiver.waitFor(id, (spans) => spans.some((s) => s.kind === SERVER) && spans.filter((s) => s.kind === CLIENT).length >= n);

describe('tracing on', () => {
  it('a retried request: one SERVER span with the trace id of the gateway, two CLIENT children with GenAI attributes', async () => {
    const traceId = randomUUID();
    fake.enqueue(CHAT_PATH, { ...openAIError(503, 'down'), headers: { 'retry-after-ms': '1' } });
    const config = target(fake, { name: 'primary', retry: { attempts: 1, use_retry_after_headers: true } });
    const r = await chat(gw, config, { headers: { 'x-gateway-trace-id': traceId }, body: { ...CHAT, max_tokens: 64 } });
    expect(r.status).toBe(200);

    const spans = await trace(traceId.replaceAll('-', ''), 2);
    const req = server(spans);
    expect(req.name).toBe('chat gpt-4o-mini');
    expect(req.parentSpanId).toBeUndefined();
    expect(req.resource['service.name']).toBe('sluice');
    expect(req.attributes).toMatchObject({
      'sluice.trace_id': traceId,
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.max_tokens': 64,
      'gen_ai.usage.input_tokens': r.json.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': r.json.usage.completion_tokens,
      'http.response.status_code': 200,
      'sluice.attempts': 2,
      'sluice.stream': false,
    });

    const [first, second] = attempts(spans);
    expect(attempts(spans)).toHaveLength(2);
    for (const a of [first!, second!]) {
      expect(a.parentSpanId).toBe(req.spanId);
      expect(a.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.request.max_tokens': 64, 'sluice.target': 'primary' });
    }
    expect(first!.attributes).toMatchObject({ 'sluice.attempt': 1, 'sluice.retry': 0, 'sluice.outcome': 'error', 'http.response.status_code': 503 });
    expect(first!.attributes['error.type']).toBeTypeOf('string');
    expect(first!.statusCode).toBe(2);
    expect(second!.attributes).toMatchObject({
      'sluice.attempt': 2,
      'sluice.retry': 1,
      'sluice.outcome': 'success',
      'http.response.status_code': 200,
      'gen_ai.response.model': r.json.model,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': r.json.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': r.json.usage.completion_tokens,
    });
    expect(second!.statusCode).not.toBe(2);
    expect(receiver.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
  });

  it('a stream: its attempt span has the finish reason and the usage of the stream', async () => {
    const traceId = randomUUID();
    const r = await chat(gw, target(fake, { name: 'streamer' }), { headers: { 'x-gateway-trace-id': traceId }, body: STREAM_CHAT });
    expect(r.status).toBe(200);
    const spans = await trace(traceId.replaceAll('-', ''), 1);
    expect(server(spans).attributes).toMatchObject({ 'sluice.stream': true, 'gen_ai.request.model': 'gpt-4o-mini', 'http.response.status_code': 200 });
    const [only] = attempts(spans);
    expect(attempts(spans)).toHaveLength(1);
    expect(only!.attributes).toMatchObject({ 'sluice.stream': true, 'sluice.outcome': 'success', 'gen_ai.response.finish_reasons': ['stop'], 'sluice.target': 'streamer' });
    expect(only!.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(only!.attributes['gen_ai.response.model']).toBeTypeOf('string');
  });

  it('a cache hit has a request span with its cache status and no attempt; a denial names its verdict and code', async () => {
    const config = { ...target(fake), cache: { mode: 'simple' } };
    const body = { ...CHAT, messages: [{ role: 'user', content: `cache me ${randomUUID()}` }] };
    expect((await chat(gw, config, { body })).status).toBe(200);
    const hit = randomUUID();
    const r = await chat(gw, config, { body, headers: { 'x-gateway-trace-id': hit } });
    expect(r.cacheStatus).toBe('HIT');
    const spans = await receiver.waitFor(hit.replaceAll('-', ''), (s) => s.some((x) => x.kind === SERVER));
    expect(server(spans).attributes).toMatchObject({ 'sluice.cache.status': 'HIT', 'sluice.attempts': 0 });
    expect(attempts(spans)).toHaveLength(0);

    const denied = randomUUID();
    const guarded = { ...target(fake), input_guardrails: [{ id: 'no-cards', 'default.regexMatch': { rule: '\\d{4} \\d{4}', not: true }, deny: true }] };
    const d = await chat(gw, guarded, { body: { ...CHAT, messages: [{ role: 'user', content: 'card 1234 5678' }] }, headers: { 'x-gateway-trace-id': denied } });
    expect(d.status).toBe(446);
    const ds = await receiver.waitFor(denied.replaceAll('-', ''), (s) => s.some((x) => x.kind === SERVER));
    expect(server(ds).attributes).toMatchObject({ 'sluice.hook.verdict': 'deny', 'http.response.status_code': 446, 'error.type': d.json.error.code });
  });

  it('a trace id that is no UUID maps to the first 128 bits of its SHA-256, kept as sluice.trace_id', async () => {
    const traceId = `order-${randomUUID()}`;
    expect((await chat(gw, target(fake), { headers: { 'x-gateway-trace-id': traceId } })).status).toBe(200);
    const expected = createHash('sha256').update(traceId).digest('hex').slice(0, 32);
    expect(otelTraceId(traceId)).toBe(expected);
    const spans = await trace(expected, 1);
    expect(server(spans).attributes['sluice.trace_id']).toBe(traceId);
  });

  it('a refusal before the body is read (401) is traced too, with no GenAI operation', async () => {
    const traceId = randomUUID();
    const r = await chat(gw, target(fake), { headers: { 'x-gateway-trace-id': traceId, 'x-gateway-api-key': 'sk-wrong-key-000000000000' } });
    expect(r.status).toBe(401);
    const spans = await receiver.waitFor(traceId.replaceAll('-', ''), (s) => s.some((x) => x.kind === SERVER));
    expect(server(spans).attributes).toMatchObject({ 'http.response.status_code': 401, 'url.path': CHAT_PATH });
    expect(server(spans).attributes['gen_ai.operation.name']).toBeUndefined();
  });
});

describe('the OTLP endpoint goes through the egress guard', () => {
  it('a private endpoint not in --trusted-hosts stops the start, naming the option', async () => {
    await expect(startGateway({ options: { 'trusted-hosts': '', 'otlp-endpoint': receiver.url } })).rejects.toThrow(/trusted-hosts/);
  });

  it('--otlp-endpoint must be an http(s) URL', async () => {
    await expect(startGateway({ options: { 'otlp-endpoint': 'ftp://127.0.0.1/v1/traces' } })).rejects.toThrow(/--otlp-endpoint.*http/);
  });
});

describe('a collector that does not answer', () => {
  it('costs the request nothing: it is answered, and the failed export is a warning naming the origin only', async () => {
    const gone = await OtlpReceiver.start();
    const url = `${gone.url}?token=collector-secret-1234`;
    await gone.close(); // nothing listens there any more
    const g = await startGateway({ options: { 'otlp-endpoint': url } });
    expect((await chat(g, target(fake))).status).toBe(200);
    await g.close(); // shutdown exports what is batched, through the egress, and fails
    const warning = g.logs.find((l) => l.msg === 'spans could not be exported');
    expect(warning).toMatchObject({ level: 40, otlp_endpoint: new URL(url).origin });
    expect(g.logText()).not.toContain('collector-secret-1234');
  });
});

describe('tracing off (the default)', () => {
  it('no tracer provider is made and no span is started, while requests are served', async () => {
    const makeTracer = vi.spyOn(BasicTracerProvider.prototype, 'getTracer');
    const startSpan = vi.spyOn(OtelTracing.prototype, 'startRequest');
    const off = await startGateway();
    try {
      fake.enqueue(CHAT_PATH, { ...openAIError(503, 'down'), headers: { 'retry-after-ms': '1' } });
      expect((await chat(off, target(fake, { retry: { attempts: 1, use_retry_after_headers: true } }))).status).toBe(200);
      expect((await chat(off, target(fake), { body: STREAM_CHAT })).status).toBe(200);
      expect(makeTracer).not.toHaveBeenCalled();
      expect(startSpan).not.toHaveBeenCalled();
      // The same spies see a gateway with tracing on.
      const on = await startGateway({ options: { 'otlp-endpoint': receiver.url } });
      try {
        expect((await chat(on, target(fake))).status).toBe(200);
        expect(makeTracer).toHaveBeenCalled();
        expect(startSpan).toHaveBeenCalled();
      } finally {
        await on.close();
      }
    } finally {
      makeTracer.mockRestore();
      startSpan.mockRestore();
      await off.close();
    }
  });
});
