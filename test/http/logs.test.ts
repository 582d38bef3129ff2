import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { EXCHANGE_TIMEOUT_MS, post } from '../helpers/http.js';
import { jsonOrUndefined } from '../helpers/json.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { logLine, PROVIDER_KEY, traceId } from './_util.js';

const KEY_A = 'sk-test-logs-workspace-a-0123456789';
const KEY_B = 'sk-test-logs-workspace-b-0123456789';
const KEY_NOWHERE = 'sk-test-logs-no-workspace-0123456789';
const BOOTSTRAP = `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a, organisation_id: org-1 }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b, organisation_id: org-1 }
  - { key: ${KEY_NOWHERE}, name: nowhere, organisation_id: org-1 }
`;
const PROMPT = 'the secret prompt words';
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] };
const T0 = Date.parse('2025-05-01T12:00:00Z');

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any;
  text: string;
}

async function getLogs(gw: TestGateway, query: string, key: string | undefined = TEST_KEY, method = 'GET'): Promise<Reply> {
  const res = await request(`${gw.url}/v1/logs${query}`, {
    method: method as 'GET',
    headers: key ? { 'x-gateway-api-key': key } : {},
    headersTimeout: EXCHANGE_TIMEOUT_MS,
    bodyTimeout: EXCHANGE_TIMEOUT_MS,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, json: jsonOrUndefined(text), text };
}

/** A chat request through `gw` to the fake, as `key`; resolves once its record is written (its log line is). */
async function chat(gw: TestGateway, fake: FakeOpenAI, key: string, trace: string, metadata?: Record<string, unknown>, body: unknown = CHAT) {
  const headers: Record<string, string> = {
    'x-gateway-api-key': key,
    'content-type': 'application/json',
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': fake.baseUrl,
    authorization: `Bearer ${PROVIDER_KEY}`,
    'x-gateway-trace-id': trace,
  };
  if (metadata) headers['x-gateway-metadata'] = JSON.stringify(metadata);
  const answer = await post(`${gw.url}/v1/chat/completions`, headers, body);
  await logLine(gw, trace);
  return answer;
}

const traces = (r: Reply): string[] => r.json.data.map((x: { trace_id: string }) => x.trace_id);

describe('GET /v1/logs (memory ring)', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let clock = T0;
  const t = { ok: traceId('ok'), failed: traceId('failed'), bad: traceId('bad'), other: traceId('other') };

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    gw = await startGateway({ bootstrapYaml: BOOTSTRAP, now: () => clock });
    // team-a: a success, an upstream 503, a 400; team-b: a success. One second apart on the gateway's clock.
    clock = T0 + 1000;
    expect((await chat(gw, fake, KEY_A, t.ok, { _user: 'alice', _environment: 'prod', n: 3 })).status).toBe(200);
    clock = T0 + 2000;
    fake.enqueue('/v1/chat/completions', openAIError(503, 'overloaded'));
    expect((await chat(gw, fake, KEY_A, t.failed, { _user: 'bob' })).status).toBe(503);
    clock = T0 + 3000;
    expect((await chat(gw, fake, KEY_A, t.bad, { _user: 'alice' }, { model: 'gpt-4o-mini', messages: 'not a list' })).status).toBe(400);
    clock = T0 + 4000;
    expect((await chat(gw, fake, KEY_B, t.other, { _user: 'alice' })).status).toBe(200);
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('by trace id: the record with scope, model, provider, target, status, latency, tokens, cache and retries; no prompt, no secret', async () => {
    const r = await getLogs(gw, `?trace_id=${t.ok}`, KEY_A);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ object: 'list', total: 1 });
    const [rec] = r.json.data;
    expect(rec).toMatchObject({
      time: T0 + 1000,
      trace_id: t.ok,
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      metadata: { _user: 'alice', _environment: 'prod', n: 3 },
      key_name: 'team-a',
      workspace_id: 'ws-a',
      organisation_id: 'org-1',
      model: 'gpt-4o-mini',
      stream: false,
      attempts: 1,
      retries: 0,
      provider: 'openai',
      target: 'config',
    });
    expect(rec.latency_ms).toBeGreaterThan(0);
    expect(rec.usage).toEqual((await logLine(gw, t.ok)).usage);
    expect(rec.usage.total_tokens).toBeGreaterThan(0);
    expect(r.text).not.toContain(PROMPT);
    expect(r.text).not.toContain(PROVIDER_KEY);
    expect(r.text).not.toContain(KEY_A);
  });

  it('the failures are recorded too: the upstream error and the body validation error', async () => {
    const failed = (await getLogs(gw, `?trace_id=${t.failed}`)).json.data[0];
    expect(failed).toMatchObject({ status: 503, error: { code: 'upstream_error', status: 503 }, provider: 'openai', attempts: 1 });
    const bad = (await getLogs(gw, `?trace_id=${t.bad}`)).json.data[0];
    expect(bad).toMatchObject({ status: 400, error: { code: 'invalid_request_body' }, key_name: 'team-a' });
    expect(bad.provider).toBeUndefined();
  });

  it('by metadata: exact match on each pair, newest first; a workspace key sees only its workspace', async () => {
    expect(traces(await getLogs(gw, '?metadata._user=alice'))).toEqual([t.other, t.bad, t.ok]);
    expect(traces(await getLogs(gw, '?metadata._user=alice', KEY_A))).toEqual([t.bad, t.ok]);
    expect(traces(await getLogs(gw, '?metadata._user=alice', KEY_B))).toEqual([t.other]);
    expect(traces(await getLogs(gw, '?metadata._user=alice&metadata._environment=prod&metadata.n=3'))).toEqual([t.ok]);
    expect((await getLogs(gw, '?metadata._user=ALICE')).json.total).toBe(0);
    // another workspace's record is not found by its trace id either
    expect(await getLogs(gw, `?trace_id=${t.ok}`, KEY_B).then((r) => r.json)).toEqual({ object: 'list', data: [], total: 0 });
    // an admin may narrow to a workspace; a workspace key asking for another is a 403
    expect(traces(await getLogs(gw, '?workspace_id=ws-b'))).toEqual([t.other]);
    const asked = await getLogs(gw, '?workspace_id=ws-b', KEY_A);
    expect(asked.status).toBe(403);
    expect(asked.json.error).toMatchObject({ code: 'forbidden_scope', param: 'workspace_id' });
    expect(traces(await getLogs(gw, '?workspace_id=ws-a&metadata._user=alice', KEY_A))).toEqual([t.bad, t.ok]);
    // a key without admin bound to no workspace reads nothing
    const nowhere = await getLogs(gw, '', KEY_NOWHERE);
    expect(nowhere.status).toBe(403);
    expect(nowhere.json.error).toMatchObject({ code: 'forbidden_scope', param: 'x-gateway-api-key' });
  });

  it('by status (exact or class) and time range (ms or ISO 8601, both ends inclusive)', async () => {
    expect(traces(await getLogs(gw, '?status=503'))).toEqual([t.failed]);
    expect(traces(await getLogs(gw, '?status=5xx'))).toEqual([t.failed]);
    expect(traces(await getLogs(gw, '?status=4XX'))).toEqual([t.bad]);
    expect(traces(await getLogs(gw, '?status=2xx'))).toEqual([t.other, t.ok]);
    expect(traces(await getLogs(gw, `?from=${T0 + 2000}&to=${T0 + 3000}`))).toEqual([t.bad, t.failed]);
    expect(traces(await getLogs(gw, '?from=2025-05-01T12:00:02Z&to=2025-05-01T14:00:03%2B02:00'))).toEqual([t.bad, t.failed]);
    expect(traces(await getLogs(gw, `?to=${T0 + 1000}&status=200`))).toEqual([t.ok]);
    expect((await getLogs(gw, '?from=2025-05-02')).json.total).toBe(0);
  });

  it('pages: page_size and current_page, 0 for the total only, a page past the end empty', async () => {
    expect(traces(await getLogs(gw, '?page_size=2'))).toEqual([t.other, t.bad]);
    expect(traces(await getLogs(gw, '?page_size=2&current_page=1'))).toEqual([t.failed, t.ok]);
    expect(traces(await getLogs(gw, '?page_size=3&current_page=1'))).toEqual([t.ok]);
    expect((await getLogs(gw, '?page_size=0')).json).toEqual({ object: 'list', data: [], total: 4 });
    expect((await getLogs(gw, '?page_size=2&current_page=2')).json).toEqual({ object: 'list', data: [], total: 4 });
    // the queries themselves are not recorded: only proxied requests are
    expect((await getLogs(gw, '')).json.total).toBe(4);
  });

  it('a bad parameter is 400 invalid_query_parameter naming it', async () => {
    const cases: [string, string][] = [
      ['?status=abc', 'status'],
      ['?status=600', 'status'],
      ['?from=yesterday', 'from'],
      ['?to=2025-05-01T12:00:00', 'to'],
      [`?from=${T0 + 1}&to=${T0}`, 'to'],
      ['?page_size=101', 'page_size'],
      ['?page_size=-1', 'page_size'],
      ['?current_page=x', 'current_page'],
      ['?trace_id=a&trace_id=b', 'trace_id'],
      ['?model=gpt-4o', 'model'],
      ['?metadata.=x', 'metadata.'],
      ['?metadata._user=a&metadata._user=b', 'metadata._user'],
    ];
    for (const [query, param] of cases) {
      const r = await getLogs(gw, query);
      expect([query, r.status, r.json.error.code, r.json.error.type, r.json.error.param]).toEqual([query, 400, 'invalid_query_parameter', 'invalid_request_error', param]);
      expect(r.json.trace_id).toBeTypeOf('string');
    }
  });

  it('needs a gateway key (401) and answers only GET (405 with Allow)', async () => {
    const none = await getLogs(gw, '', '');
    expect([none.status, none.json.error.code]).toEqual([401, 'missing_gateway_key']);
    const postIt = await getLogs(gw, '', TEST_KEY, 'POST');
    expect([postIt.status, postIt.json.error.code, postIt.headers.allow]).toEqual([405, 'method_not_allowed', 'GET']);
  });

  it('the stdout line and the record say the same of a request', async () => {
    const line = await logLine(gw, t.failed);
    const rec = (await getLogs(gw, `?trace_id=${t.failed}`)).json.data[0];
    for (const k of ['trace_id', 'method', 'path', 'status', 'latency_ms', 'metadata', 'stream', 'model', 'attempts', 'provider', 'target', 'error', 'key_name', 'workspace_id', 'organisation_id']) {
      expect([k, rec[k]]).toEqual([k, line[k]]);
    }
    expect([line.model, line.workspace_id]).toEqual(['gpt-4o-mini', 'ws-a']);
  });
});

describe('GET /v1/logs with --redis: two gateways share one capped stream', () => {
  let server: RedisServer;
  let fake: FakeOpenAI;
  let gw1: TestGateway;
  let gw2: TestGateway;
  beforeAll(async () => {
    server = await startRedisServer();
    fake = await FakeOpenAI.start();
    gw1 = await startGateway({ options: { redis: server.url, 'request-log-size': '100' }, bootstrapYaml: BOOTSTRAP });
    gw2 = await startGateway({ options: { redis: server.url, 'request-log-size': '100' }, bootstrapYaml: BOOTSTRAP });
  });
  afterAll(async () => {
    await gw1?.close();
    await gw2?.close();
    await fake?.close();
    await server?.close();
  });

  it('each gateway answers the records the other wrote, scoped the same way', async () => {
    expect(gw1.gateway.stores.requestLogs.kind).toBe('redis');
    const a = traceId('on-gw1');
    const b = traceId('on-gw2');
    expect((await chat(gw1, fake, KEY_A, a, { _user: 'carol' })).status).toBe(200);
    expect((await chat(gw2, fake, KEY_B, b, { _user: 'carol' })).status).toBe(200);
    // the XADD is sent without waiting: poll until both records are in
    const both = await vi.waitFor(
      async () => {
        const r = await getLogs(gw2, '?metadata._user=carol');
        if (r.json.total !== 2) throw new Error(`total ${r.json.total}`);
        return r;
      },
      { timeout: 5000, interval: 20 },
    );
    expect(traces(both)).toEqual([b, a]);
    expect((await getLogs(gw1, `?trace_id=${b}`)).json.data[0]).toMatchObject({ trace_id: b, workspace_id: 'ws-b', key_name: 'team-b', status: 200 });
    expect(traces(await getLogs(gw1, '?metadata._user=carol', KEY_A))).toEqual([a]);
    expect(traces(await getLogs(gw2, '?metadata._user=carol', KEY_B))).toEqual([b]);
  });
});
