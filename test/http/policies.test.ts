import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredId } from '../../src/config/usage-limits.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { callApi as call, type Reply } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const KEY_A = 'sk-test-workspace-a-0123456789';
const KEY_B = 'sk-test-workspace-b-0123456789';
const KEY_ORG = 'sk-test-organisation-0123456789';
const KEY_NOWHERE = 'sk-test-no-workspace-0123456789';
const FIXED_ID = '0b6c7d2e-3f41-4a5b-8c6d-7e8f9a0b1c2d';
const BOOTSTRAP = `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a, organisation_id: org-1 }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b, organisation_id: org-1 }
  - { key: ${KEY_ORG}, name: org, organisation_id: org-1, scopes: [admin] }
  - { key: ${KEY_NOWHERE}, name: nowhere }
usage_limits:
  - name: Per-user tokens
    type: tokens
    workspace_id: ws-a
    organisation_id: org-1
    conditions: [{ key: model, value: gpt-4o-mini }]
    group_by: [{ key: metadata._user }]
    credit_limit: 100000
    alert_threshold: 80000
    periodic_reset: monthly
  - id: ${FIXED_ID}
    name: Team B spend
    type: cost
    workspace_id: ws-b
    credit_limit: 25.5
`;
const PATH = '/v1/policies/usage-limits';


const policy = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'tokens',
  conditions: [{ key: 'api_key', value: 'team-a' }],
  group_by: [{ key: 'model' }],
  credit_limit: 1000,
  ...extra,
});

const names = (r: Reply) => (r.json.data as { name: string }[]).map((p) => p.name);

describe('usage-limits API over HTTP (memory store)', () => {
  let gw: TestGateway;
  let api: (method: string, path: string, key?: string, body?: unknown) => Promise<Reply>;
  beforeAll(async () => {
    gw = await startGateway({ bootstrapYaml: BOOTSTRAP });
    api = (m, p, k, b) => call(gw.url, m, p, k, b);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('the bootstrap file\'s policies are there at start, with every field of the record', async () => {
    const r = await api('GET', PATH, TEST_KEY);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(['object', 'data', 'total']);
    expect(r.json.object).toBe('list');
    const [a, b] = r.json.data;
    expect(a).toEqual({
      id: declaredId({ name: 'Per-user tokens', workspace_id: 'ws-a', organisation_id: 'org-1' }),
      type: 'tokens',
      status: 'active',
      workspace_id: 'ws-a',
      organisation_id: 'org-1',
      created_at: a.created_at,
      last_updated_at: a.created_at,
      name: 'Per-user tokens',
      conditions: [{ key: 'model', value: 'gpt-4o-mini' }],
      group_by: [{ key: 'metadata._user' }],
      credit_limit: 100000,
      alert_threshold: 80000,
      periodic_reset: 'monthly',
      value_key_usage_map: {},
    });
    expect(Date.parse(a.created_at)).not.toBeNaN();
    expect(b).toMatchObject({ id: FIXED_ID, type: 'cost', workspace_id: 'ws-b', organisation_id: null, credit_limit: 25.5, alert_threshold: null, periodic_reset: null, conditions: [], group_by: [] });
    // the start says how many were declared, and where they are counted
    expect(gw.logs.some((l) => l.msg === 'usage-limit policies declared' && l.declared === 2 && l.counters === 'memory')).toBe(true);
  });

  it('POST creates in the key\'s workspace: 201 with the policy; GET /{id} answers it', async () => {
    const r = await api('POST', PATH, KEY_A, policy('A tokens'));
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ name: 'A tokens', status: 'active', workspace_id: 'ws-a', organisation_id: 'org-1', value_key_usage_map: {}, alert_threshold: null, periodic_reset: null });
    const got = await api('GET', `${PATH}/${r.json.id}`, KEY_A);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(r.json);
  });

  it('scope isolation: workspace B neither lists nor reads, changes or archives workspace A\'s policies (404); naming another workspace is a 403', async () => {
    const a = (await api('POST', PATH, KEY_A, policy('A private'))).json;
    const listB = await api('GET', PATH, KEY_B);
    // "Team B spend" is declared in workspace ws-b of no organisation: another workspace than KEY_B's ws-b of org-1
    expect(names(listB)).toEqual([]);
    expect(listB.json.total).toBe(0);
    const asked = await api('GET', `${PATH}?workspace_id=ws-a`, KEY_B);
    expect(asked.status).toBe(403);
    expect(asked.json.error).toMatchObject({ code: 'forbidden_scope', type: 'permission_error', param: 'workspace_id' });
    for (const [m, body] of [['GET'], ['PUT', policy('stolen')], ['DELETE']] as const) {
      const r = await api(m, `${PATH}/${a.id}`, KEY_B, body);
      expect(r.status, m).toBe(404);
      expect(r.json.error).toMatchObject({ code: 'policy_not_found', type: 'invalid_request_error' });
    }
    expect((await api('GET', `${PATH}/${a.id}`, KEY_A)).json.status).toBe('active');
    // the organisation's admin key sees its workspaces' policies, not one declared without its organisation
    expect(names(await api('GET', PATH, KEY_ORG))).toContain('A private');
    expect(names(await api('GET', `${PATH}?workspace_id=ws-b`, KEY_ORG))).toEqual([]);
    // naming another workspace on create or update is a 403
    const r = await api('POST', PATH, KEY_B, policy('Elsewhere', { workspace_id: 'ws-a' }));
    expect(r.status).toBe(403);
    expect(r.json.error).toMatchObject({ code: 'forbidden_scope', param: 'workspace_id' });
    expect((await api('PUT', `${PATH}/${a.id}`, KEY_B, policy('x', { workspace_id: 'ws-a' }))).status).toBe(403);
    // a key without admin bound to no workspace manages nothing
    for (const [m, p, b] of [['POST', PATH, policy('x', { workspace_id: 'ws-a' })], ['GET', PATH], ['GET', `${PATH}/${a.id}`], ['PUT', `${PATH}/${a.id}`, policy('x')], ['DELETE', `${PATH}/${a.id}`]] as const) {
      const f = await api(m, p, KEY_NOWHERE, b);
      expect(f.status, `${m} ${p}`).toBe(403);
      expect(f.json.error).toMatchObject({ code: 'forbidden_scope', param: 'x-gateway-api-key' });
    }
  });

  it('filters: workspace_id, status, type, combined; total counts the matches', async () => {
    const gw2 = await startGateway({ bootstrapYaml: BOOTSTRAP });
    try {
      const api2 = (m: string, p: string, b?: unknown) => call(gw2.url, m, p, TEST_KEY, b);
      await api2('POST', PATH, policy('ws-a cost', { type: 'cost', credit_limit: 2.5, workspace_id: 'ws-a' }));
      const old = (await api2('POST', PATH, policy('ws-a old', { workspace_id: 'ws-a' }))).json;
      expect((await api2('DELETE', `${PATH}/${old.id}`)).json.status).toBe('archived');
      const list = async (q: string) => {
        const r = await api2('GET', `${PATH}?${q}`);
        expect(r.status, q).toBe(200);
        return [names(r), r.json.total];
      };
      expect(await list('workspace_id=ws-a')).toEqual([['Per-user tokens', 'ws-a cost', 'ws-a old'], 3]);
      expect(await list('status=archived')).toEqual([['ws-a old'], 1]);
      expect(await list('status=active&type=cost')).toEqual([['Team B spend', 'ws-a cost'], 2]);
      expect(await list('type=tokens&workspace_id=ws-a&status=active')).toEqual([['Per-user tokens'], 1]);
      expect(await list('workspace_id=ws-none')).toEqual([[], 0]);
    } finally {
      await gw2.close();
    }
  });

  it('pagination: page_size 0 answers only the total; pages in order; a page past the end is empty', async () => {
    const gw2 = await startGateway({ bootstrapYaml: BOOTSTRAP });
    try {
      const get = async (q: string) => (await call(gw2.url, 'GET', `${PATH}?${q}`, KEY_A)).json;
      for (const n of ['p1', 'p2', 'p3']) await call(gw2.url, 'POST', PATH, KEY_A, policy(n));
      expect(await get('page_size=0')).toEqual({ object: 'list', data: [], total: 4 });
      expect((await get('page_size=3&current_page=0')).data.map((p: any) => p.name)).toEqual(['Per-user tokens', 'p1', 'p2']);
      expect(await get('page_size=3&current_page=1')).toMatchObject({ total: 4, data: [{ name: 'p3' }] });
      expect(await get('page_size=3&current_page=2')).toEqual({ object: 'list', data: [], total: 4 });
      expect((await get('')).data).toHaveLength(4);
    } finally {
      await gw2.close();
    }
  });

  it('bad query values are a 400 invalid_query_parameter naming the parameter', async () => {
    for (const [q, param] of [
      ['page_size=-1', 'page_size'],
      ['page_size=abc', 'page_size'],
      ['page_size=101', 'page_size'],
      ['current_page=1.5', 'current_page'],
      ['status=deleted', 'status'],
      ['type=requests', 'type'],
      ['workspace_id=', 'workspace_id'],
      ['status=active&status=archived', 'status'],
      ['sort=name', ''],
    ] as const) {
      const r = await api('GET', `${PATH}?${q}`, KEY_A);
      expect(r.status, q).toBe(400);
      expect(r.json.error.code, q).toBe('invalid_query_parameter');
      if (param) expect(r.json.error.param, q).toBe(param);
      else expect(r.json.error.message, q).toMatch(/sort/);
    }
  });

  it('bodies are validated: unknown condition and group_by keys, limits, unknown fields; 400 naming the path', async () => {
    for (const [body, param] of [
      [policy('x', { conditions: [{ key: 'user', value: 'u' }] }), 'conditions[0].key'],
      [policy('x', { conditions: [{ key: 'metadata.', value: 'u' }] }), 'conditions[0].key'],
      [policy('x', { conditions: [{ key: 'model', value: 'a' }, { key: 'model', value: 'b' }] }), 'conditions[1].key'],
      [policy('x', { group_by: [{ key: 'trace_id' }] }), 'group_by[0].key'],
      [policy('x', { credit_limit: 0 }), 'credit_limit'],
      [policy('x', { credit_limit: 10.5 }), 'credit_limit'],
      [policy('x', { alert_threshold: 2000 }), 'alert_threshold'],
      [policy('x', { periodic_reset: 'hourly' }), 'periodic_reset'],
      [policy('x', { type: 'requests' }), 'type'],
      [policy('x', { value_key_usage_map: { a: 1 } }), ''],
      [{ name: 'x', type: 'tokens' }, 'credit_limit'],
    ] as const) {
      const r = await api('POST', PATH, KEY_A, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.code).toBe('invalid_request_body');
      if (param) expect(r.json.error.param, JSON.stringify(body)).toBe(param);
      else expect(r.json.error.message).toMatch(/value_key_usage_map/);
    }
    // every documented key is accepted
    const ok = await api('POST', PATH, KEY_A, policy('All keys', {
      conditions: ['api_key', 'workspace_id', 'provider', 'model', 'metadata._user'].map((key) => ({ key, value: 'v' })),
      group_by: ['api_key', 'workspace_id', 'provider', 'model', 'metadata.team'].map((key) => ({ key })),
    }));
    expect(ok.status).toBe(201);
  });

  it('PUT replaces the definition (type and scope fixed); DELETE archives; PUT status active restarts', async () => {
    const p = (await api('POST', PATH, KEY_A, policy('Editable'))).json;
    const u = await api('PUT', `${PATH}/${p.id}`, KEY_A, policy('Edited', { credit_limit: 50, periodic_reset: 'daily', group_by: [] }));
    expect(u.status).toBe(200);
    expect(u.json).toMatchObject({ id: p.id, name: 'Edited', credit_limit: 50, periodic_reset: 'daily', group_by: [], created_at: p.created_at, status: 'active' });
    const t = await api('PUT', `${PATH}/${p.id}`, KEY_A, policy('Edited', { type: 'cost' }));
    expect([t.status, t.json.error.param]).toEqual([400, 'type']);
    const d = await api('DELETE', `${PATH}/${p.id}`, KEY_A);
    expect(d.status).toBe(200);
    expect(d.json).toMatchObject({ id: p.id, status: 'archived', name: 'Edited' });
    expect((await api('DELETE', `${PATH}/${p.id}`, KEY_A)).json).toEqual(d.json);
    expect((await api('GET', `${PATH}/${p.id}`, KEY_A)).json.status).toBe('archived');
    expect((await api('PUT', `${PATH}/${p.id}`, KEY_A, policy('Edited', { status: 'active' }))).json.status).toBe('active');
  });

  it('unknown ids are 404; other methods 405; without a key 401', async () => {
    expect((await api('GET', `${PATH}/00000000-0000-4000-8000-000000000000`, KEY_A)).status).toBe(404);
    expect((await api('GET', `${PATH}/not-a-uuid`, KEY_A)).json.error.code).toBe('policy_not_found');
    const m = await api('PATCH', PATH, KEY_A, {});
    expect([m.status, m.headers.allow]).toEqual([405, 'GET, POST']);
    expect((await api('GET', PATH, undefined)).status).toBe(401);
  });
});

describe('usage-limits API with --redis: shared, declared once, kept across restarts', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('two gateways declare the bootstrap policies once, see each other\'s writes, and a restart keeps them', async () => {
    const opts = { options: { redis: server.url }, bootstrapYaml: BOOTSTRAP };
    const [gw1, gw2] = await Promise.all([startGateway(opts), startGateway(opts)]);
    let created: any;
    try {
      expect(gw1.gateway.stores.policies.kind).toBe('redis');
      const list1 = (await call(gw1.url, 'GET', PATH, TEST_KEY)).json;
      expect(list1.total).toBe(2);
      created = (await call(gw1.url, 'POST', PATH, KEY_A, policy('Shared'))).json;
      expect((await call(gw2.url, 'GET', `${PATH}/${created.id}`, KEY_A)).json).toEqual(created);
      expect((await call(gw2.url, 'DELETE', `${PATH}/${created.id}`, KEY_A)).json.status).toBe('archived');
      expect((await call(gw1.url, 'GET', `${PATH}/${created.id}`, KEY_A)).json.status).toBe('archived');
    } finally {
      await Promise.all([gw1.close(), gw2.close()]);
    }
    const gw3 = await startGateway(opts);
    try {
      const list = (await call(gw3.url, 'GET', PATH, TEST_KEY)).json;
      expect(list.total).toBe(3);
      expect(list.data.map((p: any) => [p.name, p.status])).toEqual([
        ['Per-user tokens', 'active'],
        ['Team B spend', 'active'],
        ['Shared', 'archived'],
      ]);
    } finally {
      await gw3.close();
    }
  });
});
