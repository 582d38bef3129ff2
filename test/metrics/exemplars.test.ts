/**
 * Exemplars: the latency histograms (request duration, upstream attempt duration, time to first
 * token) carry the request's trace id, written in OpenMetrics when the scraper asks for it and left
 * out of the classic text format; the trace id of an exemplar finds the request's record in
 * GET /v1/logs.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { wantsOpenMetrics } from '../../src/metrics/exposition.js';
import { HistogramFamily } from '../../src/metrics/series.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { chat, STREAM_CHAT, target } from '../routing/helpers.js';

/** What Prometheus sends when it scrapes with exemplar storage on. */
const PROMETHEUS_ACCEPT = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway();
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

async function scrape(accept?: string): Promise<{ contentType: string; text: string }> {
  const res = await request(`${gw.url}/metrics`, { headers: accept ? { accept } : {} });
  return { contentType: String(res.headers['content-type']), text: await res.body.text() };
}

/** OpenMetrics bucket lines of `metric` whose exemplar is `traceId`: [line, exemplar value]. */
function exemplarLines(text: string, metric: string, traceId: string): { line: string; value: number; le: number }[] {
  const out: { line: string; value: number; le: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}_bucket{`)) continue;
    const m = /le="([^"]+)".* # \{trace_id="([^"]+)"\} (\S+) (\S+)$/.exec(line);
    if (m && m[2] === traceId) out.push({ line, value: Number(m[3]), le: m[1] === '+Inf' ? Infinity : Number(m[1]) });
  }
  return out;
}

describe('exemplars', () => {
  it('an OpenMetrics scrape shows the request trace id on the latency buckets it fell in, and the log finds the request by it', async () => {
    const traceId = randomUUID();
    const r = await chat(gw, target(fake, { name: 'exemplar-target' }), { headers: { 'x-gateway-trace-id': traceId }, body: STREAM_CHAT });
    expect(r.status).toBe(200);

    const open = await scrape(PROMETHEUS_ACCEPT);
    expect(open.contentType).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
    expect(open.text.endsWith('# EOF\n')).toBe(true);
    for (const metric of ['sluice_request_duration_seconds', 'gen_ai_client_operation_duration_seconds', 'gen_ai_server_time_to_first_token_seconds']) {
      const found = exemplarLines(open.text, metric, traceId);
      expect(found, metric).toHaveLength(1);
      // The exemplar sits on the first bucket whose bound holds its value.
      expect(found[0]!.value).toBeLessThanOrEqual(found[0]!.le);
    }
    // Counters are written the OpenMetrics way (TYPE without _total, samples with it).
    expect(open.text).toContain('# TYPE sluice_target_requests counter');
    expect(open.text).toMatch(/^sluice_target_requests_total\{target="exemplar-target"/m);

    const logs = await request(`${gw.url}/v1/logs?trace_id=${traceId}`, { headers: { 'x-gateway-api-key': TEST_KEY } });
    const page = (await logs.body.json()) as { data: { trace_id: string; status: number; target: string }[] };
    expect(logs.statusCode).toBe(200);
    expect(page.data).toHaveLength(1);
    expect(page.data[0]).toMatchObject({ trace_id: traceId, status: 200 });
  });

  it('the classic text format has no exemplars and keeps its counter names after an OpenMetrics scrape', async () => {
    await scrape(PROMETHEUS_ACCEPT);
    const classic = await scrape();
    expect(classic.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(classic.text).not.toContain('# {trace_id=');
    expect(classic.text).toContain('# TYPE sluice_target_requests_total counter');
    expect(classic.text).not.toContain('# EOF');
  });
});

describe('content negotiation and cells', () => {
  it.each([
    [undefined, false],
    ['text/plain', false],
    [PROMETHEUS_ACCEPT, true],
    ['application/openmetrics-text', true],
    ['application/openmetrics-text;q=0,text/plain', false],
  ])('Accept %s → OpenMetrics %s', (accept, expected) => {
    expect(wantsOpenMetrics(accept)).toBe(expected);
  });

  it('a bucket keeps its latest exemplar; a trace id too long for OpenMetrics is counted without one', async () => {
    const registry = new Registry();
    const h = new HistogramFamily('x_seconds', 'x', ['l'], [0.1, 1], registry);
    const cell = h.cell('a');
    cell.observe(0.05, 'first');
    cell.observe(0.07, 'second');
    cell.observe(0.5, 'x'.repeat(121));
    cell.observe(5);
    expect(cell.count).toBe(4);
    const values = (await h.get()).values;
    const buckets = values.filter((v) => v.metricName === 'x_seconds_bucket');
    expect(buckets.map((b) => b.exemplar?.labelSet.trace_id)).toEqual(['second', undefined, undefined]);
    expect(buckets[0]!.exemplar!.value).toBe(0.07);
  });
});
