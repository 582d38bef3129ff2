/**
 * What the gateway counts of Messages answers, through the official Anthropic SDK: prompt-cache reads
 * and writes priced at their own rates (JSON and streams) and seen by a cost limit, the metrics under
 * the `messages` and `count_tokens` endpoints, and Anthropic's request id and rate-limit headers
 * passed on.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { messageStream } from '../fakes/anthropic-server.js';
import { post } from '../helpers/http.js';
import { metricSum, scrape, until } from '../cache-http/_http.js';
import { useDoor } from './_door.js';

const WS_KEY = 'sk-test-messages-acct-0123456789';
const door = useDoor(() => ({}), () => `api_keys:\n  - { key: ${WS_KEY}, name: acct, workspace_id: ws-acct, organisation_id: org-acct }\n`);
const ask = (text: string) => ({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content: text }] });

/** An answer that read 2,000 tokens from Anthropic's prompt cache and wrote 100 to it. */
const USAGE = { input_tokens: 10, output_tokens: 30, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000 };
const ANSWER = { id: 'msg_c', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: USAGE };
const FRAMES = messageStream([{ text: ['ok'] }], { input: 10, output: 30, cacheRead: 2000, cacheWrite: 100 });
/** claude-sonnet-4-5 per million tokens: input $3, cache reads $0.30, cache writes $3.75, output $15. */
const COST = (10 * 3 + 2000 * 0.3 + 100 * 3.75 + 30 * 15) / 1e6;

const client = (metadata: Record<string, string>) => door.sdk({ 'x-gateway-api-key': WS_KEY, 'x-gateway-metadata': JSON.stringify(metadata) });
const logLine = (trace: string) => until('the log line', () => door.gw.logs.find((l) => l.msg === 'request' && l.trace_id === trace));

describe('Messages usage: cache tokens priced, limits, metrics', () => {
  it('JSON: cache reads and writes priced at their own rates; x-gateway-cost and the log line carry it', async () => {
    door.fake.enqueue('/v1/messages', { json: ANSWER });
    const trace = `acct-${randomUUID()}`;
    const { response } = await client({}).messages.create(ask('json'), { headers: { 'x-gateway-trace-id': trace } }).withResponse();
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(COST, 12);
    const line = await logLine(trace);
    expect(line.cost).toBeCloseTo(COST, 12);
  });

  it('a stream: the usage of message_start and message_delta priced the same way in the log line', async () => {
    door.fake.enqueue('/v1/messages', { frames: FRAMES });
    const trace = `acct-${randomUUID()}`;
    const final = await client({}).messages.stream(ask('stream'), { headers: { 'x-gateway-trace-id': trace } }).finalMessage();
    expect(final.usage).toMatchObject(USAGE);
    const line = await logLine(trace);
    expect(line.cost).toBeCloseTo(COST, 12);
  });

  it('a cost limit counts cache tokens at their prices: JSON and a stream reach it, the next request is a 412', async () => {
    const caseId = randomUUID();
    const created = await post(`${door.gw.url}/v1/policies/usage-limits`, door.gw.headers(), {
      name: 'claude spend', type: 'cost', credit_limit: 2 * COST, workspace_id: 'ws-acct', organisation_id: 'org-acct', conditions: [{ key: 'metadata.case', value: caseId }],
    });
    expect(created.status).toBe(201);
    door.fake.enqueue('/v1/messages', { json: ANSWER });
    door.fake.enqueue('/v1/messages', { frames: FRAMES });
    await client({ case: caseId }).messages.create(ask('one'));
    await client({ case: caseId }).messages.stream(ask('two')).finalMessage();
    const used = () =>
      fetch(`${door.gw.url}/v1/policies/usage-limits/${created.json.id}`, { headers: door.gw.headers() })
        .then((r) => r.json() as Promise<{ value_key_usage_map: Record<string, number> }>)
        .then((p) => p.value_key_usage_map[''] ?? 0);
    expect(await until('both answers counted', async () => ((await used()) >= 2 * COST - 1e-12 ? used() : undefined))).toBeCloseTo(2 * COST, 12);
    const refused = await client({ case: caseId }).messages.create(ask('three')).catch((e: { status: number }) => e);
    expect((refused as { status: number }).status).toBe(412);
    expect(door.fake.requests).toHaveLength(2);
  });

  it('metrics: request and target series under endpoint messages and count_tokens; tokens and cost per workspace', async () => {
    const read = async () => {
      const m = await scrape(door.gw.url);
      return {
        requests: metricSum(m, 'sluice_request_duration_seconds_count', { endpoint: 'messages', status_class: '2xx' }),
        counts: metricSum(m, 'sluice_request_duration_seconds_count', { endpoint: 'count_tokens', status_class: '2xx' }),
        target: metricSum(m, 'sluice_target_requests_total', { provider: 'anthropic', endpoint: 'messages', outcome: 'success' }),
        input: metricSum(m, 'sluice_usage_tokens_total', { workspace: 'ws-acct', provider: 'anthropic', token_type: 'input' }),
        output: metricSum(m, 'sluice_usage_tokens_total', { workspace: 'ws-acct', provider: 'anthropic', token_type: 'output' }),
        cost: metricSum(m, 'sluice_usage_cost_usd_total', { workspace: 'ws-acct', provider: 'anthropic' }),
      };
    };
    const before = await read();
    door.fake.enqueue('/v1/messages', { json: ANSWER });
    await client({}).messages.create(ask('metrics'));
    await client({}).messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'metrics' }] });
    const after = await until('the metrics', async () => {
      const a = await read();
      return a.requests > before.requests && a.counts > before.counts ? a : undefined;
    });
    expect(after.requests - before.requests).toBe(1);
    expect(after.counts - before.counts).toBe(1);
    expect(after.target - before.target).toBe(1);
    expect(after.input - before.input).toBe(10 + 100 + 2000);
    expect(after.output - before.output).toBe(30);
    expect(after.cost - before.cost).toBeCloseTo(COST, 12);
  });
});

describe('Anthropic’s response headers on the Messages door', () => {
  it('request-id and anthropic-ratelimit-* reach the client, JSON and streams', async () => {
    const limits = { 'anthropic-ratelimit-requests-remaining': '49', 'anthropic-ratelimit-tokens-reset': '2030-01-01T00:00:00Z' };
    door.fake.enqueue('/v1/messages', { json: ANSWER, headers: limits });
    const { response, request_id } = await client({}).messages.create(ask('headers')).withResponse();
    expect(request_id).toBe('req_fake');
    expect(response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('49');
    expect(response.headers.get('anthropic-ratelimit-tokens-reset')).toBe('2030-01-01T00:00:00Z');
    door.fake.enqueue('/v1/messages', { frames: FRAMES, headers: limits });
    const streamed = await post(`${door.gw.url}/v1/messages`, door.gw.headers({ 'x-gateway-virtual-key': 'claude', 'anthropic-version': '2023-06-01' }), { ...ask('s'), stream: true });
    expect(streamed.headers['request-id']).toBe('req_fake');
    expect(streamed.headers['anthropic-ratelimit-requests-remaining']).toBe('49');
  });
});
