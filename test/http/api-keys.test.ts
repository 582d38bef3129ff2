/**
 * The admin API for gateway keys: admin only, the key shown once, stored as a digest, listed without
 * it, revoked by id (the next request is a 401), scoped to an admin's organisation; with Redis,
 * shared by every instance and kept across restarts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyDigest } from '../../src/security/api-keys.js';
import type { RedisApiKeyStore } from '../../src/state/redis/api-key-store.js';
import { apiKeyKeys } from '../../src/state/redis/api-key-store.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { callApi, post } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { createRedis } from '../../src/state/redis/connection.js';
import { nextEvent } from '../state/redis-test-utils.js';

const KEY_A = 'sk-test-keys-workspace-a-0123456789';
const KEY_ORG_ADMIN = 'sk-test-keys-org-admin-0123456789';
const BOOTSTRAP = `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a }
  - { key: ${KEY_ORG_ADMIN}, name: org-admin, organisation_id: org-1, scopes: [admin] }
`;
const PATH = '/v1/api-keys';
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await FakeOpenAI.start();
});
afterAll(async () => {
  await fake?.close();
});

/** A proxied chat request with this gateway key: its status (200, or 401 for a refused key). */
async function chatWith(gw: TestGateway, key: string): Promise<number> {
  const headers = { 'x-gateway-api-key': key, 'content-type': 'application/json', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, authorization: 'Bearer sk-provider' };
  return (await post(`${gw.url}/v1/chat/completions`, headers, CHAT)).status;
}

describe('/v1/api-keys (memory store)', () => {
  let gw: TestGateway;
  const api = (m: string, p: string, k: string | undefined, b?: unknown) => callApi(gw.url, m, p, k, b);
  beforeAll(async () => {
    gw = await startGateway({ bootstrapYaml: BOOTSTRAP });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('POST makes a key: 201 with the key shown once; it works at once; list and get never show it', async () => {
    const r = await api('POST', PATH, TEST_KEY, { name: 'ci', workspace_id: 'ws-a', organisation_id: 'org-1' });
    expect(r.status, r.text).toBe(201);
    const key: string = r.json.key;
    expect(key).toMatch(/^sk-sluice-[A-Za-z0-9_-]{32}$/);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'api_key',
      name: 'ci',
      workspace_id: 'ws-a',
      organisation_id: 'org-1',
      scopes: [],
      created_at: expect.any(String),
      hint: `sk-sluice-…${key.slice(-4)}`,
      key,
    });
    expect(r.json.id).not.toContain(key.slice(10, 20));
    expect(await chatWith(gw, key)).toBe(200);
    // a workspace key: it manages its workspace (here: reads its request records)
    expect((await api('GET', '/v1/logs?page_size=0', key)).status).toBe(200);

    const got = await api('GET', `${PATH}/${r.json.id}`, TEST_KEY);
    expect(got.status).toBe(200);
    const { key: _shown, ...rest } = r.json;
    expect(got.json).toEqual(rest);
    const list = await api('GET', PATH, TEST_KEY);
    expect(list.json.object).toBe('list');
    expect(list.json.data).toContainEqual(rest);
    for (const text of [got.text, list.text, gw.logText()]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(key.slice(10, -4));
    }
    // stored as its digest only
    expect(gw.gateway.catalog.apiKeys.verify(key)).toMatchObject({ id: r.json.id, name: 'ci' });
  });

  it('DELETE revokes: the next request with the key is a 401; the id is then unknown', async () => {
    const made = (await api('POST', PATH, TEST_KEY, { name: 'short-lived' })).json;
    expect(made.workspace_id).toBeNull();
    expect(await chatWith(gw, made.key)).toBe(200);
    const del = await api('DELETE', `${PATH}/${made.id}`, TEST_KEY);
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ id: made.id, object: 'api_key', deleted: true });
    expect(await chatWith(gw, made.key)).toBe(401);
    const again = await api('DELETE', `${PATH}/${made.id}`, TEST_KEY);
    expect(again.status).toBe(404);
    expect(again.json.error.code).toBe('api_key_not_found');
    expect((await api('GET', `${PATH}/${made.id}`, TEST_KEY)).status).toBe(404);
    expect((await api('GET', PATH, TEST_KEY)).json.data.map((k: { id: string }) => k.id)).not.toContain(made.id);
  });

  it('a made admin key is an admin: it makes keys and manages every workspace', async () => {
    const admin = (await api('POST', PATH, TEST_KEY, { name: 'ops', scopes: ['admin', 'admin'] })).json;
    expect(admin.scopes).toEqual(['admin']);
    const child = await api('POST', PATH, admin.key, { name: 'child', workspace_id: 'ws-b' });
    expect(child.status).toBe(201);
    expect((await api('GET', '/v1/logs?workspace_id=ws-b&page_size=0', admin.key)).status).toBe(200);
  });

  it('only admin keys: a workspace key gets 403 forbidden_scope on every route; no key is a 401', async () => {
    for (const [m, p, b] of [['POST', PATH, { name: 'x' }], ['GET', PATH], ['GET', `${PATH}/any`], ['DELETE', `${PATH}/any`]] as const) {
      const r = await api(m, p, KEY_A, b);
      expect(r.status, `${m} ${p}`).toBe(403);
      expect(r.json.error).toMatchObject({ code: 'forbidden_scope', type: 'permission_error', param: 'x-gateway-api-key' });
      expect((await api(m, p, undefined, b)).status).toBe(401);
    }
  });

  it('an organisation\'s admin makes keys in its organisation only, and sees and revokes only those', async () => {
    const mine = await api('POST', PATH, KEY_ORG_ADMIN, { name: 'org-team', workspace_id: 'ws-o', scopes: ['admin'] });
    expect(mine.status).toBe(201);
    expect(mine.json).toMatchObject({ workspace_id: 'ws-o', organisation_id: 'org-1', scopes: ['admin'] });
    // what it makes is bound to its organisation, even an admin key: never above itself
    const plain = (await api('POST', PATH, KEY_ORG_ADMIN, { name: 'org-plain' })).json;
    expect(plain.organisation_id).toBe('org-1');
    const other = await api('POST', PATH, KEY_ORG_ADMIN, { name: 'x', organisation_id: 'org-2' });
    expect(other.status).toBe(403);
    expect(other.json.error).toMatchObject({ code: 'forbidden_scope', param: 'organisation_id' });
    const unbound = (await api('POST', PATH, TEST_KEY, { name: 'operator-made' })).json;
    const list = (await api('GET', PATH, KEY_ORG_ADMIN)).json;
    expect(list.data.every((k: { organisation_id: string }) => k.organisation_id === 'org-1')).toBe(true);
    expect(list.data.map((k: { id: string }) => k.id)).toEqual(expect.arrayContaining([mine.json.id, plain.id]));
    expect((await api('GET', `${PATH}/${unbound.id}`, KEY_ORG_ADMIN)).status).toBe(404);
    expect((await api('DELETE', `${PATH}/${unbound.id}`, KEY_ORG_ADMIN)).status).toBe(404);
    expect(await chatWith(gw, unbound.key)).toBe(200);
    expect((await api('GET', `${PATH}?organisation_id=org-2`, KEY_ORG_ADMIN)).status).toBe(403);
    expect((await api('DELETE', `${PATH}/${plain.id}`, KEY_ORG_ADMIN)).status).toBe(200);
  });

  it('bodies and queries are validated: 400 naming the field; PUT is a 405', async () => {
    for (const [b, param] of [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x', scopes: ['root'] }, 'scopes[0]'],
      [{ name: 'x', scopes: 'admin' }, 'scopes'],
      [{ name: 'x', workspace_id: '' }, 'workspace_id'],
      [{ name: 'x', key: 'sk-sluice-chosen-by-me-000000' }, 'key'],
    ] as const) {
      const r = await api('POST', PATH, TEST_KEY, b);
      expect(r.status, JSON.stringify(b)).toBe(400);
      expect(r.json.error.code).toBe('invalid_request_body');
      expect(r.json.error.param ?? '', JSON.stringify(b)).toBe(param);
    }
    expect((await api('GET', `${PATH}?page_size=101`, TEST_KEY)).json.error.param).toBe('page_size');
    expect((await api('GET', `${PATH}/x?colour=red`, TEST_KEY)).status).toBe(400);
    const put = await api('PUT', `${PATH}/x`, TEST_KEY, { name: 'x' });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, DELETE');
  });

  it('pages the list like the other APIs; declared keys are not listed', async () => {
    const gw2 = await startGateway({ bootstrapYaml: BOOTSTRAP });
    try {
      const a = (m: string, p: string, b?: unknown) => callApi(gw2.url, m, p, TEST_KEY, b);
      expect((await a('GET', PATH)).json).toEqual({ object: 'list', data: [], total: 0 });
      const ids: string[] = [];
      for (const n of ['k1', 'k2', 'k3']) ids.push((await a('POST', PATH, { name: n, workspace_id: n === 'k3' ? 'ws-3' : 'ws-1' })).json.id);
      // Listed by created_at, then id: keys made in the same millisecond come in id order, not creation order.
      const all = (await a('GET', PATH)).json.data.map((k: { id: string }) => k.id) as string[];
      expect([...all].sort()).toEqual([...ids].sort());
      expect((await a('GET', `${PATH}?page_size=2&current_page=1`)).json.data.map((k: { id: string }) => k.id)).toEqual([all[2]]);
      expect((await a('GET', `${PATH}?page_size=0`)).json).toEqual({ object: 'list', data: [], total: 3 });
      expect((await a('GET', `${PATH}?workspace_id=ws-3`)).json.data.map((k: { id: string }) => k.id)).toEqual([ids[2]]);
      expect((await a('GET', `${PATH}?current_page=9`)).json).toEqual({ object: 'list', data: [], total: 3 });
    } finally {
      await gw2.close();
    }
  });
});

describe('/v1/api-keys with --redis: shared by every instance, kept across restarts', () => {
  let server: RedisServer;
  let gw1: TestGateway;
  let gw2: TestGateway;
  beforeAll(async () => {
    server = await startRedisServer();
    gw1 = await startGateway({ options: { redis: server.url }, bootstrapYaml: BOOTSTRAP });
    gw2 = await startGateway({ options: { redis: server.url }, bootstrapYaml: BOOTSTRAP });
  });
  afterAll(async () => {
    await gw1?.close();
    await gw2?.close();
    await server?.close();
  });

  it('made on one gateway, it works on the other; revoked there, the first refuses it; a restart keeps it; Redis holds only its digest', async () => {
    const store1 = gw1.gateway.stores.apiKeys as RedisApiKeyStore;
    const store2 = gw2.gateway.stores.apiKeys as RedisApiKeyStore;
    const digestHex = (k: string) => Buffer.from(keyDigest(k), 'latin1').toString('hex');

    const keep = (await callApi(gw1.url, 'POST', PATH, TEST_KEY, { name: 'kept', workspace_id: 'ws-a' })).json;
    let arrived = store2.verify(keep.key) ? Promise.resolve('') : nextEvent<string>((cb) => store2.onRefreshed((d) => d === digestHex(keep.key) && cb(d)), 3000, 'the add on gw2');
    await arrived;
    expect(await chatWith(gw2, keep.key)).toBe(200);

    const gone = (await callApi(gw2.url, 'POST', PATH, TEST_KEY, { name: 'revoked' })).json;
    arrived = store1.verify(gone.key) ? Promise.resolve('') : nextEvent<string>((cb) => store1.onRefreshed((d) => d === digestHex(gone.key) && cb(d)), 3000, 'the add on gw1');
    await arrived;
    expect(await chatWith(gw1, gone.key)).toBe(200);
    arrived = nextEvent<string>((cb) => store1.onRefreshed((d) => d === digestHex(gone.key) && cb(d)), 3000, 'the revoke on gw1');
    expect((await callApi(gw2.url, 'DELETE', `${PATH}/${gone.id}`, TEST_KEY)).status).toBe(200);
    await arrived;
    expect(await chatWith(gw1, gone.key)).toBe(401);
    expect((await callApi(gw1.url, 'GET', PATH, TEST_KEY)).json.data.map((k: { name: string }) => k.name)).toEqual(['kept']);

    // what Redis holds: the digest and the record, never the key
    const conn = createRedis(server.url);
    try {
      await conn.waitUntilReady(3000);
      const raw = await conn.client.hgetall(apiKeyKeys('sluice:').keys);
      expect(Object.keys(raw)).toEqual([digestHex(keep.key)]);
      const text = JSON.stringify(raw);
      expect(text).not.toContain(keep.key);
      expect(text).not.toContain(keep.key.slice(10, -4));
    } finally {
      await conn.close();
    }

    // a restart: a new gateway on the same Redis accepts the kept key (and not the revoked one)
    await gw2.close();
    gw2 = await startGateway({ options: { redis: server.url }, bootstrapYaml: BOOTSTRAP });
    expect(await chatWith(gw2, keep.key)).toBe(200);
    expect(await chatWith(gw2, gone.key)).toBe(401);
  });

  it('Redis down: a new key or a revoke is a 503 store_unavailable; keys already known keep working', async () => {
    const known = (await callApi(gw1.url, 'POST', PATH, TEST_KEY, { name: 'known' })).json;
    await server.stop();
    try {
      const made = await callApi(gw1.url, 'POST', PATH, TEST_KEY, { name: 'refused' });
      expect(made.status).toBe(503);
      expect(made.json.error.code).toBe('store_unavailable');
      expect((await callApi(gw1.url, 'DELETE', `${PATH}/${known.id}`, TEST_KEY)).status).toBe(503);
      expect(await chatWith(gw1, known.key)).toBe(200);
    } finally {
      await server.restart();
    }
  });
});
