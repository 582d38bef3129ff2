/**
 * Usage limits enforced over HTTP (memory store): tokens and cost policies against a fake provider
 * that reports known usage, JSON and streams; the 412 body; matching and scope; the price header and
 * log; periodic reset on an injected clock; alerts once per period (log, metric, webhook); groups
 * settled under the target that answered. Redis faults and two processes: test/faults/usage-limits.test.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { chatCompletion, chatWithUsage, FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { FakeClock } from '../helpers/clock.js';
import { EXCHANGE_TIMEOUT_MS, post, type Answer } from '../helpers/http.js';
import { jsonOrUndefined } from '../helpers/json.js';
import { metricSum, parseSse, scrape, until } from '../cache-http/_http.js';

const KEY_A = 'sk-test-limits-ws-a-0123456789';
const KEY_A2 = 'sk-test-limits-ws-a2-0123456789';
const KEY_B = 'sk-test-limits-ws-b-0123456789';
const KEY_ORG = 'sk-test-limits-org-0123456789';
const BOOTSTRAP = `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a, organisation_id: org-1 }
  - { key: ${KEY_A2}, name: team-a-batch, workspace_id: ws-a, organisation_id: org-1 }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b, organisation_id: org-1 }
  - { key: ${KEY_ORG}, name: org, organisation_id: org-1 }
prices:
  openai:
    priced-by-operator: { input: 1, output: 2 }
`;
const PATH = '/v1/policies/usage-limits';
/** What the fake reports for every chat request (unless a test says otherwise). */
const USAGE = { prompt_tokens: 20, completion_tokens: 10 };
/** gpt-4o-mini: 20 × $0.15 + 10 × $0.60 per million tokens. */
const COST = (20 * 0.15 + 10 * 0.6) / 1e6;

async function api(base: string, method: string, path: string, body?: unknown, key = TEST_KEY): Promise<{ status: number; json: any }> {
  const res = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: EXCHANGE_TIMEOUT_MS,
    bodyTimeout: EXCHANGE_TIMEOUT_MS,
  });
  return { status: res.statusCode, json: jsonOrUndefined(await res.body.text()) };
}

describe('usage limits over HTTP (memory store)', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let hooks: Server;
  let hookUrl: string;
  const received: any[] = [];
  const clock = new FakeClock(Date.UTC(2031, 4, 14, 12));

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    fake.setDefault('/v1/chat/completions', chatWithUsage(USAGE));
    hooks = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        received.push({ headers: req.headers, body: JSON.parse(body) });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/alerts`;
    gw = await startGateway({ bootstrapYaml: BOOTSTRAP, now: clock.now, options: { 'usage-limit-alert-webhook': hookUrl } });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await new Promise((r) => hooks?.close(r));
  });

  /** A policy of workspace ws-a that applies only to requests sending metadata case=<id>. */
  async function policy(body: Record<string, unknown>): Promise<{ id: string; caseId: string }> {
    const caseId = randomUUID();
    const conditions = [{ key: 'metadata.case', value: caseId }, ...((body.conditions as unknown[]) ?? [])];
    const r = await api(gw.url, 'POST', PATH, { workspace_id: 'ws-a', organisation_id: 'org-1', ...body, conditions });
    expect(r.status).toBe(201);
    return { id: r.json.id, caseId };
  }

  function chat(caseId: string, opts: { key?: string; user?: string; body?: Record<string, unknown>; headers?: Record<string, string> } = {}): Promise<Answer> {
    const metadata: Record<string, string> = { case: caseId };
    if (opts.user) metadata._user = opts.user;
    return post(
      `${gw.url}/v1/chat/completions`,
      {
        'x-gateway-api-key': opts.key ?? KEY_A,
        'content-type': 'application/json',
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': fake.baseUrl,
        authorization: 'Bearer sk-upstream',
        'x-gateway-metadata': JSON.stringify(metadata),
        ...opts.headers,
      },
      { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...opts.body },
    );
  }

  const statuses = async (n: number, send: () => Promise<Answer>): Promise<number[]> => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await send()).status);
    return out;
  };
  const usageMap = async (id: string): Promise<Record<string, number>> => (await api(gw.url, 'GET', `${PATH}/${id}`)).json.value_key_usage_map;

  it('tokens: admits until the reported usage reaches the limit, then 412 with the envelope naming the policy and group; per group', async () => {
    const { id, caseId } = await policy({ name: 'Per-user tokens', type: 'tokens', credit_limit: 90, group_by: [{ key: 'metadata._user' }], periodic_reset: 'daily' });
    // each request uses 30: admitted at 0, 30 and 60 used (below 90); at 90 the limit is reached
    expect(await statuses(4, () => chat(caseId, { user: 'alice' }))).toEqual([200, 200, 200, 412]);
    const calls = fake.requests.length;
    const refused = await chat(caseId, { user: 'alice' });
    expect(refused.status).toBe(412);
    expect(fake.requests.length).toBe(calls); // refused before the provider is called
    expect(refused.json).toEqual({
      error: {
        message: expect.stringContaining(`policy ${id}`),
        type: 'usage_limit_error',
        code: 'usage_limit_exceeded',
        param: null,
      },
      trace_id: refused.headers['x-gateway-trace-id'],
      usage_limit: {
        policy_id: id,
        policy_name: 'Per-user tokens',
        type: 'tokens',
        group: 'alice',
        credit_limit: 90,
        used: 90,
        reserved: 0,
        reason: 'reached',
        periodic_reset: 'daily',
        resets_at: '2031-05-15T00:00:00.000Z',
      },
    });
    expect(refused.json.error.message).toBe(
      `Usage limit "Per-user tokens" (policy ${id}) for "alice" is reached: used 90 of 90 tokens a day, refused until 2031-05-15T00:00:00.000Z (in-flight reservations 0).`,
    );
    // another user has a counter of their own
    expect((await chat(caseId, { user: 'bob' })).status).toBe(200);
    expect(await usageMap(id)).toEqual({ alice: 90, bob: 30 });
    // a request the policy's conditions do not match is not limited (no case metadata)
    expect((await chat('another-case', { user: 'alice' })).status).toBe(200);
    // the refusals are counted per policy
    expect(metricSum(await scrape(gw.url), 'sluice_usage_limit_rejections_total', { policy: id })).toBe(2);
  });

  it('at the edge: a fresh credit_limit of 42, 20-token answers, no max_tokens (an estimate over 1,024): three 200s, then 412 "reached"', async () => {
    const { id, caseId } = await policy({ name: 'Edge tokens', type: 'tokens', credit_limit: 42 });
    const twenty = chatWithUsage({ prompt_tokens: 5, completion_tokens: 15 });
    fake.enqueue('/v1/chat/completions', twenty, twenty, twenty);
    const calls = fake.requests.length;
    const body = { max_tokens: undefined };
    // admitted at 0, 20 and 40 used: below 42, though each reserves far more than what is left
    expect(await statuses(3, () => chat(caseId, { body }))).toEqual([200, 200, 200]);
    expect(await usageMap(id)).toEqual({ '': 60 });
    const refused = await chat(caseId, { body });
    expect(refused.status).toBe(412);
    expect(fake.requests.length).toBe(calls + 3);
    expect(refused.json.error.message).toContain('is reached: used 60 of 42 tokens in all');
    expect(refused.json.usage_limit).toMatchObject({ policy_id: id, credit_limit: 42, used: 60, reserved: 0, reason: 'reached', resets_at: null });
  });

  it('at the edge, cost: a limit in USD smaller than one estimate admits until usage reaches it', async () => {
    // no max_tokens: the estimate is 5 × 0.15 + 1,024 × 0.60 = 615 µ$; each answer costs 9 µ$
    const { id, caseId } = await policy({ name: 'Edge spend', type: 'cost', credit_limit: 0.00002 });
    const body = { max_tokens: undefined };
    expect(await statuses(4, () => chat(caseId, { body }))).toEqual([200, 200, 200, 412]);
    expect(await usageMap(id)).toEqual({ '': 0.000027 });
    const refused = await chat(caseId, { body });
    expect(refused.json.error.message).toContain('is reached: used 0.000027 of 0.00002 USD in all');
    expect(refused.json.usage_limit).toMatchObject({ used: 0.000027, reserved: 0, reason: 'reached' });
  });

  it('the estimate counts every billable field: a 200 KB field of a request in flight holds over 50,000 tokens, so others are refused meanwhile', async () => {
    const { id, caseId } = await policy({ name: 'Small tokens', type: 'tokens', credit_limit: 2000 });
    const big = 'x'.repeat(200_000);
    const schema = { type: 'object', properties: { a: { type: 'string', description: big } } };
    const dodges: Record<string, unknown>[] = [
      { response_format: { type: 'json_schema', json_schema: { name: 's', schema } } },
      { prediction: { type: 'content', content: big } },
      { functions: [{ name: 'f', parameters: schema }] },
      { tools: [{ type: 'function', function: { name: 'f', parameters: schema } }] },
      { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, refusal: big }] },
    ];
    let used = 0;
    for (const body of dodges) {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      fake.enqueue('/v1/chat/completions', () => held.then(() => ({ json: chatCompletion('ok', { usage: USAGE }) })));
      const calls = fake.requests.length;
      const pending = chat(caseId, { body });
      await fake.waitForRequests(calls + 1);
      const refused = await chat(caseId);
      expect(refused.status, Object.keys(body)[0]).toBe(412);
      expect(fake.requests.length).toBe(calls + 1); // refused before the provider
      expect(refused.json.usage_limit).toMatchObject({ used, reason: 'in_flight' });
      expect(refused.json.usage_limit.reserved, Object.keys(body)[0]).toBeGreaterThan(50_000);
      expect(refused.json.error.message).toContain('in-flight reservations fill the rest');
      // Room held by requests in flight comes back: this refusal, unlike "reached", is worth a retry.
      expect(refused.headers['x-should-retry']).toBe('true');
      release();
      expect((await pending).status).toBe(200);
      used += 30;
    }
    expect(await usageMap(id)).toEqual({ '': used });
  });

  it('a model condition matches the normalised id the price table uses: case and snapshot dates count under it, in one group', async () => {
    const { id, caseId } = await policy({ name: 'Mini tokens', type: 'tokens', credit_limit: 90, conditions: [{ key: 'model', value: 'gpt-4o-mini' }], group_by: [{ key: 'model' }] });
    const models = ['GPT-4o-mini', 'gpt-4o-mini-2024-07-18', 'Gpt-4o-Mini-2024-07-18'];
    for (const model of models) expect((await chat(caseId, { body: { model } })).status).toBe(200);
    expect(await usageMap(id)).toEqual({ 'gpt-4o-mini': 90 });
    expect((await chat(caseId, { body: { model: 'gpt-4o-mini-2024-07-18' } })).status).toBe(412);
    // another model is not under the condition
    expect((await chat(caseId, { body: { model: 'gpt-4o' } })).status).toBe(200);
  });

  it('tokens: streams count the reported usage, also when the client said include_usage: false', async () => {
    const { id, caseId } = await policy({ name: 'Stream tokens', type: 'tokens', credit_limit: 60 });
    const stream = { stream: true, stream_options: { include_usage: false } };
    const first = await chat(caseId, { body: stream });
    expect(first.status).toBe(200);
    const frames = parseSse(first.text);
    expect(frames.at(-1)!.data).toBe('[DONE]');
    // the usage chunk the gateway asked for is not shown
    expect(frames.some((f) => f.data.includes('"choices":[]'))).toBe(false);
    expect(await usageMap(id)).toEqual({ '': 30 });
    expect((await chat(caseId, { body: stream })).status).toBe(200);
    // 60 used: even the smallest estimate does not fit
    const refused = await chat(caseId, { body: stream });
    expect(refused.status).toBe(412);
    expect(refused.headers['content-type']).toMatch(/application\/json/);
    expect(refused.json.usage_limit).toMatchObject({ policy_id: id, group: '', used: 60 });
  });

  it('cost: the price table prices each answer; x-gateway-cost, the log line and the record carry it; limits in USD', async () => {
    const { id, caseId } = await policy({ name: 'Spend', type: 'cost', credit_limit: 0.000045 });
    const trace = `cost-${randomUUID()}`;
    const first = await chat(caseId, { headers: { 'x-gateway-trace-id': trace } });
    expect(first.status).toBe(200);
    expect(Number(first.headers['x-gateway-cost'])).toBeCloseTo(COST, 12);
    expect(first.headers['x-gateway-cost']).toBe('0.000009');
    const line = await until('the log line', () => gw.logs.find((l) => l.msg === 'request' && l.trace_id === trace));
    expect(line.cost).toBeCloseTo(COST, 12);
    const records = await api(gw.url, 'GET', `/v1/logs?trace_id=${trace}`);
    expect(records.json.data[0].cost).toBeCloseTo(COST, 12);
    // used 9 µ$ each: admitted at 0, 9, 18, 27 and 36 µ$; at 45 µ$ the limit is reached
    expect(await statuses(5, () => chat(caseId))).toEqual([200, 200, 200, 200, 412]);
    expect(await usageMap(id)).toEqual({ '': 0.000045 });
    // a model the price table does not know: a cost policy refuses it (412 price_unknown), never counts it as free
    const unknown = await chat(caseId, { body: { model: 'gpt-unknown' } });
    expect(unknown.status).toBe(412);
    expect(unknown.json.error).toMatchObject({ code: 'price_unknown', type: 'usage_limit_error' });
    expect(unknown.json.error.message).toContain('openai model "gpt-unknown"');
    // the bootstrap file's prices extend the table
    const { caseId: other } = await policy({ name: 'Operator prices', type: 'cost', credit_limit: 1 });
    const priced = await chat(other, { body: { model: 'priced-by-operator' } });
    expect(priced.status).toBe(200);
    expect(priced.headers['x-gateway-cost']).toBe('0.00004'); // 20 × $1 + 10 × $2 per million
  });

  it('requests outside any policy still carry their cost; an unpriced model has none', async () => {
    const priced = await chat('no-policy');
    expect(priced.headers['x-gateway-cost']).toBe('0.000009');
    const unpriced = await chat('no-policy', { body: { model: 'local-model' } });
    expect(unpriced.status).toBe(200);
    expect(unpriced.headers['x-gateway-cost']).toBeUndefined();
  });

  it('scope: a workspace policy applies to keys of that workspace only; an organisation policy to its keys; api_key matches the key name', async () => {
    // 30 used per request, 15 reserved: 0 + 15 and 30 + 15 fit under 45, 60 + 15 does not
    const { caseId } = await policy({ name: 'Batch key only', type: 'tokens', credit_limit: 45, conditions: [{ key: 'api_key', value: 'team-a-batch' }] });
    expect(await statuses(3, () => chat(caseId, { key: KEY_A2 }))).toEqual([200, 200, 412]);
    expect((await chat(caseId, { key: KEY_A })).status).toBe(200); // another key of the workspace
    expect((await chat(caseId, { key: KEY_B })).status).toBe(200); // another workspace
    const org = randomUUID();
    const r = await api(gw.url, 'POST', PATH, {
      name: 'Org wide',
      type: 'tokens',
      credit_limit: 45,
      organisation_id: 'org-1',
      conditions: [{ key: 'metadata.case', value: org }],
      group_by: [{ key: 'workspace_id' }],
    });
    expect(r.status).toBe(201);
    expect(await statuses(3, () => chat(org, { key: KEY_B }))).toEqual([200, 200, 412]);
    expect(await statuses(2, () => chat(org, { key: KEY_ORG }))).toEqual([200, 200]);
    expect((await chat(org, { key: TEST_KEY })).status).toBe(200); // a key without scope is not limited
    expect(await usageMap(r.json.id)).toEqual({ 'ws-b': 60, '': 60 });
  });

  it('an archived policy stops limiting; its PUT back to active limits again (the index follows the store)', async () => {
    const { id, caseId } = await policy({ name: 'Toggle', type: 'tokens', credit_limit: 30 });
    expect(await statuses(2, () => chat(caseId))).toEqual([200, 412]);
    expect((await api(gw.url, 'DELETE', `${PATH}/${id}`)).status).toBe(200);
    expect((await chat(caseId)).status).toBe(200);
    const put = await api(gw.url, 'PUT', `${PATH}/${id}`, {
      name: 'Toggle',
      type: 'tokens',
      credit_limit: 1000,
      status: 'active',
      conditions: [{ key: 'metadata.case', value: caseId }],
    });
    expect(put.status).toBe(200);
    expect(put.json.value_key_usage_map).toEqual({ '': 30 });
    expect((await chat(caseId)).status).toBe(200);
    expect(await usageMap(id)).toEqual({ '': 60 });
  });

  it('periodic reset: a new UTC day starts from zero (injected clock)', async () => {
    const { id, caseId } = await policy({ name: 'Daily', type: 'tokens', credit_limit: 30, periodic_reset: 'daily' });
    expect(await statuses(2, () => chat(caseId))).toEqual([200, 412]);
    const saved = clock.t;
    try {
      clock.t = Date.UTC(2031, 4, 15); // midnight
      expect(await usageMap(id)).toEqual({});
      expect(await statuses(2, () => chat(caseId))).toEqual([200, 412]);
      expect(await usageMap(id)).toEqual({ '': 30 });
    } finally {
      clock.t = saved;
    }
    expect(await usageMap(id)).toEqual({ '': 30 });
  });

  it('alert: crossing alert_threshold emits one event per period and group (log line, metric, webhook without secrets)', async () => {
    const { id, caseId } = await policy({
      name: 'Alerting',
      type: 'tokens',
      credit_limit: 1000,
      alert_threshold: 50,
      periodic_reset: 'weekly',
      group_by: [{ key: 'metadata._user' }],
    });
    const before = received.length;
    expect(await statuses(4, () => chat(caseId, { user: 'carol' }))).toEqual([200, 200, 200, 200]);
    await until('the webhook call', () => received.length > before);
    const alerts = () => gw.logs.filter((l) => l.msg === 'usage limit alert' && l.policy_id === id);
    expect(alerts()).toHaveLength(1);
    expect(alerts()[0]).toMatchObject({ level: 40, group: 'carol', used: 60, alert_threshold: 50, credit_limit: 1000, period: 'w2031-05-12' });
    expect(received.slice(before)).toHaveLength(1);
    const call = received.at(-1);
    expect(call.body).toEqual({
      event: 'usage_limit.alert',
      policy_id: id,
      policy_name: 'Alerting',
      workspace_id: 'ws-a',
      organisation_id: 'org-1',
      type: 'tokens',
      group: 'carol',
      used: 60,
      alert_threshold: 50,
      credit_limit: 1000,
      period: 'w2031-05-12',
      resets_at: '2031-05-19T00:00:00.000Z',
    });
    const sent = JSON.stringify(call);
    for (const secret of [KEY_A, 'sk-upstream']) expect(sent).not.toContain(secret);
    // another user crosses on their own
    expect(await statuses(2, () => chat(caseId, { user: 'dave' }))).toEqual([200, 200]);
    await until('dave\'s alert', () => alerts().length === 2);
    expect(metricSum(await scrape(gw.url), 'sluice_usage_limit_alerts_total', { policy: id })).toBe(2);
    // the next week: a new period, a new alert for carol
    const saved = clock.t;
    try {
      clock.t = Date.UTC(2031, 4, 19, 1);
      expect(await statuses(2, () => chat(caseId, { user: 'carol' }))).toEqual([200, 200]);
      await until('carol\'s second alert', () => alerts().length === 3);
    } finally {
      clock.t = saved;
    }
    expect(alerts().map((a) => [a.group, a.period])).toEqual([
      ['carol', 'w2031-05-12'],
      ['dave', 'w2031-05-12'],
      ['carol', 'w2031-05-19'],
    ]);
  });

  it('group_by provider: the usage counts under the target that answered (a fallback to another provider)', async () => {
    const broken = await FakeOpenAI.start();
    broken.setDefault('/v1/chat/completions', openAIError(500, 'down'));
    try {
      const { id, caseId } = await policy({ name: 'Per provider', type: 'tokens', credit_limit: 1000, group_by: [{ key: 'provider' }] });
      const config = {
        strategy: { mode: 'fallback' },
        targets: [
          { provider: 'openai', custom_host: broken.baseUrl, api_key: 'k' },
          { provider: 'groq', custom_host: fake.baseUrl, api_key: 'k' },
        ],
      };
      const r = await post(
        `${gw.url}/v1/chat/completions`,
        { 'x-gateway-api-key': KEY_A, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config), 'x-gateway-metadata': JSON.stringify({ case: caseId }) },
        { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      );
      expect(r.status).toBe(200);
      expect(r.headers['x-gateway-provider']).toBe('groq');
      // reserved under openai (the first target), counted under groq; openai's failed attempt counts nothing
      expect(await usageMap(id)).toEqual({ groq: 30 });
    } finally {
      await broken.close();
    }
  });

  it('metrics: tokens and cost per workspace and provider, by exactly what one answer reported', async () => {
    const read = async () => {
      const m = await scrape(gw.url);
      return [
        metricSum(m, 'sluice_usage_tokens_total', { workspace: 'ws-a', provider: 'openai', token_type: 'input' }),
        metricSum(m, 'sluice_usage_tokens_total', { workspace: 'ws-a', provider: 'openai', token_type: 'output' }),
        metricSum(m, 'sluice_usage_cost_usd_total', { workspace: 'ws-a', provider: 'openai' }),
      ];
    };
    const before = await read();
    expect((await chat('metrics')).status).toBe(200);
    const after = await read();
    expect(after[0]! - before[0]!).toBe(USAGE.prompt_tokens);
    expect(after[1]! - before[1]!).toBe(USAGE.completion_tokens);
    expect(after[2]! - before[2]!).toBeCloseTo(COST, 12);
  });
});
