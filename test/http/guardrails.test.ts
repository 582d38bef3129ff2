import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import type { ValidateChecks } from '../../src/management/guardrails.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { callApi as call, type Reply } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const KEY_A = 'sk-test-workspace-a-0123456789';
const KEY_B = 'sk-test-workspace-b-0123456789';
const KEY_ORG = 'sk-test-organisation-0123456789';
const KEY_NOWHERE = 'sk-test-no-workspace-0123456789';
const KEY_ORG_MEMBER = 'sk-test-org-member-0123456789';
const BOOTSTRAP = `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b }
  - { key: ${KEY_ORG}, name: org, organisation_id: org-1, scopes: [admin] }
  - { key: ${KEY_NOWHERE}, name: nowhere }
  - { key: ${KEY_ORG_MEMBER}, name: org-member, organisation_id: org-1 }
`;

/** A stand-in for the check library's validator: knows two ids and refuses others as it does. */
const KNOWN = new Set(['default.contains', 'default.regexMatch', 'contains', 'regexMatch']);
const validateChecks: ValidateChecks = (checks, path) =>
  checks.forEach((c, i) => {
    if (!KNOWN.has(c.id)) {
      throw new GatewayError('invalid_config', `${path}.${i}.parameters: unknown check id "${c.id}"`, {
        param: `${path}.${i}.parameters`,
        issues: [{ path: [path, i, 'parameters'], message: `unknown check id "${c.id}"` }],
      });
    }
  });


const body = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  checks: [{ id: 'default.contains', parameters: { words: ['card'], operator: 'none' } }],
  actions: { onFail: 'block', message: 'Blocked by policy' },
  ...extra,
});

describe('guardrails API over HTTP (memory store)', () => {
  let gw: TestGateway;
  let api: (method: string, path: string, key?: string, body?: unknown, headers?: Record<string, string>) => Promise<Reply>;
  beforeAll(async () => {
    gw = await startGateway({ bootstrapYaml: BOOTSTRAP, validateChecks });
    api = (m, p, k, b, h) => call(gw.url, m, p, k, b, h);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('POST creates: 201 with {id, slug, version_id}; the key\'s workspace is the guardrail\'s', async () => {
    const r = await api('POST', '/v1/guardrails', KEY_A, body('Card numbers'));
    expect(r.status).toBe(201);
    expect(Object.keys(r.json).sort()).toEqual(['id', 'slug', 'version_id']);
    expect(r.json.slug).toBe('card-numbers');
    const got = await api('GET', `/v1/guardrails/${r.json.id}`, KEY_A);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({
      id: r.json.id,
      slug: 'card-numbers',
      version_id: r.json.version_id,
      name: 'Card numbers',
      workspace_id: 'ws-a',
      checks: [{ id: 'default.contains', parameters: { words: ['card'], operator: 'none' } }],
      actions: { onFail: 'block', message: 'Blocked by policy' },
    });
    expect(got.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    // the plan builder's lookup sees it (unscoped: by id or slug)
    expect(gw.gateway.stores.guardrails.lookup('card-numbers')?.id).toBe(r.json.id);
  });

  it('bad bodies are 400s naming the field', async () => {
    const cases: [unknown, string, string][] = [
      [{ checks: body('x').checks, actions: {} }, 'invalid_request_body', 'name'],
      [body('x', { checks: [] }), 'invalid_request_body', 'checks'],
      [body('x', { checks: [{ parameters: {} }] }), 'invalid_request_body', 'checks[0].id'],
      [body('x', { checks: [{ id: 'contains', parameters: [] }] }), 'invalid_request_body', 'checks[0].parameters'],
      [body('x', { actions: { onFail: 'explode' } }), 'invalid_request_body', 'actions.onFail'],
      [body('x', { actions: { colour: 'red' } }), 'invalid_request_body', 'actions.colour'],
      [body('x', { surprise: 1 }), 'invalid_request_body', 'surprise'],
      [body('x', { checks: [{ id: 'contains', parameters: {} }, { id: 'default.nope', parameters: {} }] }), 'invalid_config', 'checks.1.parameters'],
    ];
    for (const [b, code, param] of cases) {
      const r = await api('POST', '/v1/guardrails', KEY_A, b);
      expect(r.status, JSON.stringify(b)).toBe(400);
      expect(r.json.error.code).toBe(code);
      expect(r.json.error.param ?? '').toBe(param);
      expect(r.json.trace_id).toBeTypeOf('string');
    }
    expect((await api('POST', '/v1/guardrails', KEY_A, '{"name":')).json.error.code).toBe('invalid_json');
    expect((await api('POST', '/v1/guardrails', KEY_A, 'name=x', { 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('scope: an admin key must name workspace_id or organisation_id; a workspace key naming another is a 403', async () => {
    const none = await api('POST', '/v1/guardrails', TEST_KEY, body('Nowhere'));
    expect(none.status).toBe(400);
    expect(none.json.error.param).toBe('workspace_id');
    const placed = await api('POST', '/v1/guardrails', TEST_KEY, body('Placed', { workspace_id: 'ws-b' }));
    expect(placed.status).toBe(201);
    expect((await api('GET', `/v1/guardrails/${placed.json.id}`, KEY_B)).json.workspace_id).toBe('ws-b');
    const other = await api('POST', '/v1/guardrails', KEY_A, body('Elsewhere', { workspace_id: 'ws-b' }));
    expect(other.status).toBe(403);
    expect(other.json.error).toMatchObject({ code: 'forbidden_scope', type: 'permission_error', param: 'workspace_id' });
    expect(other.json.trace_id).toBeTypeOf('string');
    const sameWs = await api('POST', '/v1/guardrails', KEY_A, body('Here', { workspace_id: 'ws-a' }));
    expect(sameWs.status).toBe(201);
    // this workspace key belongs to no organisation: naming one is outside its scope too
    const orgOut = await api('POST', '/v1/guardrails', KEY_A, body('Org', { organisation_id: 'org-9' }));
    expect(orgOut.status).toBe(403);
    expect(orgOut.json.error.param).toBe('organisation_id');
    // an organisation's admin key places in its organisation (optionally a workspace of it), not another
    const org = await api('POST', '/v1/guardrails', KEY_ORG, body('Org wide'));
    expect(org.status).toBe(201);
    expect((await api('GET', `/v1/guardrails/${org.json.id}`, KEY_ORG)).json.organisation_id).toBe('org-1');
    const org2 = await api('POST', '/v1/guardrails', KEY_ORG, body('x', { organisation_id: 'org-2' }));
    expect(org2.status).toBe(403);
    expect(org2.json.error.param).toBe('organisation_id');
  });

  it('403 forbidden_scope: a key without admin bound to no workspace manages nothing, on every route', async () => {
    for (const k of [KEY_NOWHERE, KEY_ORG_MEMBER]) {
      for (const [m, p, b] of [
        ['POST', '/v1/guardrails', body('x', { workspace_id: 'ws-a' })],
        ['GET', '/v1/guardrails'],
        ['GET', '/v1/guardrails/anything'],
        ['PUT', '/v1/guardrails/anything', body('x')],
        ['DELETE', '/v1/guardrails/anything'],
      ] as const) {
        const r = await api(m, p, k, b);
        expect(r.status, `${m} ${p}`).toBe(403);
        expect(r.json.error).toMatchObject({ code: 'forbidden_scope', type: 'permission_error', param: 'x-gateway-api-key' });
      }
    }
  });

  it('isolation: another workspace\'s guardrail is 404 for GET, PUT and DELETE, absent from its list, and unchanged', async () => {
    const mine = (await api('POST', '/v1/guardrails', KEY_A, body('Private rule'))).json;
    for (const ref of [mine.id, mine.slug]) {
      const g = await api('GET', `/v1/guardrails/${ref}`, KEY_B);
      expect(g.status).toBe(404);
      expect(g.json.error.code).toBe('guardrail_not_found');
      expect((await api('GET', `/v1/guardrails/${ref}?version_id=${mine.version_id}`, KEY_B)).status).toBe(404);
      expect((await api('PUT', `/v1/guardrails/${ref}`, KEY_B, body('Taken over'))).status).toBe(404);
      expect((await api('DELETE', `/v1/guardrails/${ref}`, KEY_B)).status).toBe(404);
    }
    const listB = await api('GET', '/v1/guardrails?page_size=100', KEY_B);
    expect(listB.json.data.map((g: { id: string }) => g.id)).not.toContain(mine.id);
    const asked = await api('GET', '/v1/guardrails?workspace_id=ws-a', KEY_B);
    expect(asked.status).toBe(403);
    expect(asked.json.error).toMatchObject({ code: 'forbidden_scope', param: 'workspace_id' });
    const still = await api('GET', `/v1/guardrails/${mine.id}`, KEY_A);
    expect(still.json).toMatchObject({ name: 'Private rule', version_id: mine.version_id });
    // an admin key sees every workspace
    expect((await api('GET', `/v1/guardrails/${mine.id}`, TEST_KEY)).status).toBe(200);
  });

  it('PUT adds a version: new version_id, the old one still addressable by ?version_id=', async () => {
    const v1 = (await api('POST', '/v1/guardrails', KEY_B, body('Versioned'))).json;
    const put = await api('PUT', '/v1/guardrails/versioned', KEY_B, body('Versioned', { actions: { onFail: 'log' } }));
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ id: v1.id, slug: 'versioned', version_id: expect.any(String) });
    expect(put.json.version_id).not.toBe(v1.version_id);
    expect((await api('GET', '/v1/guardrails/versioned', KEY_B)).json).toMatchObject({ version_id: put.json.version_id, actions: { onFail: 'log' } });
    const old = await api('GET', `/v1/guardrails/versioned?version_id=${v1.version_id}`, KEY_B);
    expect(old.json).toMatchObject({ version_id: v1.version_id, actions: { onFail: 'block', message: 'Blocked by policy' } });
    const noVersion = await api('GET', '/v1/guardrails/versioned?version_id=nope', KEY_B);
    expect(noVersion.status).toBe(404);
    expect(noVersion.json.error.param).toBe('version_id');
    // the plan builder's lookup: latest, or pinned
    const lookup = gw.gateway.stores.guardrails;
    expect(lookup.lookup(v1.id)?.version_id).toBe(put.json.version_id);
    expect(lookup.lookup(v1.id, v1.version_id)?.actions.onFail).toBe('block');
    // PUT validates as POST does, and cannot move the guardrail
    expect((await api('PUT', '/v1/guardrails/versioned', KEY_B, body('x', { checks: [{ id: 'bogus' }] }))).json.error.code).toBe('invalid_config');
    const move = await api('PUT', '/v1/guardrails/versioned', TEST_KEY, body('x', { workspace_id: 'ws-a' }));
    expect(move.status).toBe(400);
    expect(move.json.error.param).toBe('workspace_id');
    expect((await api('PUT', '/v1/guardrails/versioned', KEY_B, body('x', { workspace_id: 'ws-a' }))).status).toBe(403);
    expect((await api('PUT', '/v1/guardrails/versioned', TEST_KEY, body('Versioned 3', { workspace_id: 'ws-b' }))).status).toBe(200);
    expect((await api('PUT', '/v1/guardrails/unknown-one', KEY_B, body('x'))).status).toBe(404);
  });

  it('DELETE removes it (answering what was deleted); then it is 404', async () => {
    const g = (await api('POST', '/v1/guardrails', KEY_A, body('Short lived'))).json;
    const del = await api('DELETE', '/v1/guardrails/short-lived', KEY_A);
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ id: g.id, slug: 'short-lived', version_id: g.version_id, object: 'guardrail', deleted: true });
    expect((await api('GET', `/v1/guardrails/${g.id}`, KEY_A)).status).toBe(404);
    expect((await api('DELETE', `/v1/guardrails/${g.id}`, KEY_A)).status).toBe(404);
    expect(gw.gateway.stores.guardrails.lookup(g.id)).toBeUndefined();
  });

  it('GET lists a workspace\'s guardrails, paginated; bad query values are 400s naming the parameter', async () => {
    const gw2 = await startGateway({ bootstrapYaml: BOOTSTRAP, validateChecks });
    try {
      const a = (m: string, p: string, k?: string, b?: unknown) => call(gw2.url, m, p, k, b);
      const made: string[] = [];
      for (let i = 0; i < 3; i++) made.push((await a('POST', '/v1/guardrails', KEY_A, body(`List ${i}`))).json.id);
      await a('POST', '/v1/guardrails', KEY_B, body('B only'));
      const all = await a('GET', '/v1/guardrails', KEY_A);
      expect(all.status).toBe(200);
      expect(all.json.object).toBe('list');
      expect(all.json.total).toBe(3);
      expect(all.json.data.map((g: { id: string }) => g.id)).toEqual(made);
      expect((await a('GET', '/v1/guardrails?page_size=2&current_page=1', KEY_A)).json.data.map((g: { id: string }) => g.id)).toEqual([made[2]]);
      expect((await a('GET', '/v1/guardrails?page_size=2&current_page=7', KEY_A)).json).toEqual({ object: 'list', data: [], total: 3 });
      expect((await a('GET', '/v1/guardrails?page_size=0', KEY_A)).json).toEqual({ object: 'list', data: [], total: 3 });
      expect((await a('GET', '/v1/guardrails', TEST_KEY)).json.total).toBe(4);
      expect((await a('GET', '/v1/guardrails?workspace_id=ws-b', TEST_KEY)).json.data.map((g: { name: string }) => g.name)).toEqual(['B only']);
      for (const [q, param] of [
        ['page_size=-1', 'page_size'],
        ['page_size=abc', 'page_size'],
        ['page_size=101', 'page_size'],
        ['current_page=1.5', 'current_page'],
        ['page_size=1&page_size=2', 'page_size'],
        ['colour=red', 'colour'],
        ['workspace_id=ws-a&colour=red&size=1', 'colour'],
        ['workspace_id=', 'workspace_id'],
      ]) {
        const r = await a('GET', `/v1/guardrails?${q}`, KEY_A);
        expect(r.status, q).toBe(400);
        expect(r.json.error.code).toBe('invalid_query_parameter');
        expect(r.json.error.param ?? '', q).toBe(param);
      }
      const get = await a('GET', `/v1/guardrails/${made[0]}?colour=red`, KEY_A);
      expect(get.status).toBe(400);
      expect(get.json.error).toMatchObject({ code: 'invalid_query_parameter', param: 'colour' });
      expect(get.json.error.message).toContain('colour');
    } finally {
      await gw2.close();
    }
  });

  it('every route needs a gateway key; other methods are 405 with Allow', async () => {
    expect((await api('GET', '/v1/guardrails', undefined)).json.error.code).toBe('missing_gateway_key');
    expect((await api('POST', '/v1/guardrails', 'sk-wrong-key-000000000000', body('x'))).status).toBe(401);
    expect((await api('DELETE', '/v1/guardrails/x', undefined)).status).toBe(401);
    const patch = await api('PATCH', '/v1/guardrails/x', KEY_A, body('x'));
    expect(patch.status).toBe(405);
    expect(patch.headers.allow).toBe('GET, PUT, DELETE');
    expect((await api('DELETE', '/v1/guardrails', KEY_A)).headers.allow).toBe('GET, POST');
  });
});

describe('guardrails API with --redis: two gateways share the guardrails', () => {
  let server: RedisServer;
  let gw1: TestGateway;
  let gw2: TestGateway;
  beforeAll(async () => {
    server = await startRedisServer();
    gw1 = await startGateway({ options: { redis: server.url }, bootstrapYaml: BOOTSTRAP, validateChecks });
    gw2 = await startGateway({ options: { redis: server.url }, bootstrapYaml: BOOTSTRAP, validateChecks });
  });
  afterAll(async () => {
    await gw1?.close();
    await gw2?.close();
    await server?.close();
  });

  it('created on one, read, updated and deleted through the other, versions kept', async () => {
    expect(gw1.gateway.stores.guardrails.kind).toBe('redis');
    const store2 = gw2.gateway.stores.guardrails as import('../../src/state/redis/guardrail-store.js').RedisGuardrailStore;
    /** Resolves once gw2's mirror has re-read `id` and `done()` holds (pub/sub from gw1). */
    const seen = (id: string, done: () => boolean) =>
      new Promise<void>((resolve) => {
        const off = store2.onRefreshed((x) => x === id && done() && (off(), resolve()));
      });
    const created = await call(gw1.url, 'POST', '/v1/guardrails', KEY_A, body('Shared'));
    expect(created.status).toBe(201);
    if (!store2.lookup(created.json.id)) await seen(created.json.id, () => store2.lookup(created.json.id) !== undefined);
    const got = await call(gw2.url, 'GET', '/v1/guardrails/shared', KEY_A);
    expect(got.json).toMatchObject({ id: created.json.id, version_id: created.json.version_id, workspace_id: 'ws-a' });
    expect((await call(gw2.url, 'GET', '/v1/guardrails/shared', KEY_B)).status).toBe(404);

    const put = await call(gw2.url, 'PUT', '/v1/guardrails/shared', KEY_A, body('Shared v2'));
    expect(put.status).toBe(200);
    const store1 = gw1.gateway.stores.guardrails;
    if (store1.lookup('shared')?.version_id !== put.json.version_id) {
      await new Promise<void>((resolve) => {
        const off = (store1 as typeof store2).onRefreshed(() => store1.lookup('shared')?.version_id === put.json.version_id && (off(), resolve()));
      });
    }
    expect((await call(gw1.url, 'GET', '/v1/guardrails/shared', KEY_A)).json.name).toBe('Shared v2');
    expect((await call(gw1.url, 'GET', `/v1/guardrails/shared?version_id=${created.json.version_id}`, KEY_A)).json.name).toBe('Shared');

    const gone = seen(created.json.id, () => store2.lookup(created.json.id) === undefined);
    expect((await call(gw1.url, 'DELETE', '/v1/guardrails/shared', KEY_A)).status).toBe(200);
    await gone;
    expect((await call(gw2.url, 'GET', '/v1/guardrails/shared', KEY_A)).status).toBe(404);
  });

  it('Redis down: reads answer from the mirror, writes are 503 store_unavailable', async () => {
    const kept = await call(gw1.url, 'POST', '/v1/guardrails', KEY_B, body('Kept'));
    expect(kept.status).toBe(201);
    await server.stop();
    const refused = await call(gw1.url, 'POST', '/v1/guardrails', KEY_B, body('Refused'));
    expect(refused.status).toBe(503);
    expect(refused.json.error.code).toBe('store_unavailable');
    expect((await call(gw1.url, 'PUT', '/v1/guardrails/kept', KEY_B, body('Kept 2'))).status).toBe(503);
    expect((await call(gw1.url, 'DELETE', '/v1/guardrails/kept', KEY_B)).status).toBe(503);
    const read = await call(gw1.url, 'GET', '/v1/guardrails/kept', KEY_B);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ name: 'Kept', version_id: kept.json.version_id });
  });
});
