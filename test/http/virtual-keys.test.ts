/**
 * The virtual keys API: made, listed, read, rotated and deleted through HTTP, scoped to a workspace
 * (in the API and when a request uses the key), secrets never answered or logged, refused without a
 * master key, and, with Redis, sealed at rest (the raw value holds no secret), shared and kept.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/security/master-key.js';
import { createRedis } from '../../src/state/redis/connection.js';
import type { RedisVirtualKeyStore } from '../../src/state/redis/virtual-key-store.js';
import { virtualKeyKeys } from '../../src/state/redis/virtual-key-scripts.js';
import { virtualKeyRef } from '../../src/state/virtual-key-store.js';

/** KEY_A's (organisation, workspace): where what it makes lives. */
const A_SCOPE = { workspace_id: 'ws-a', organisation_id: 'org-1' };
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { callApi, post } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { nextEvent } from '../state/redis-test-utils.js';

const KEY_A = 'sk-test-vk-workspace-a-0123456789';
const KEY_B = 'sk-test-vk-workspace-b-0123456789';
const KEY_NOWHERE = 'sk-test-vk-no-workspace-0123456789';
/** The bootstrap file: three gateway keys, and a declared virtual key that reaches the fake provider. */
const bootstrap = (): string => `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a, organisation_id: org-1 }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b, organisation_id: org-1 }
  - { key: ${KEY_NOWHERE}, name: nowhere }
virtual_keys:
  declared-vk:
    provider: openai
    custom_host: ${fake.baseUrl}
    api_key: sk-declared-provider-secret
  declared-proxy:
    provider: openai
    custom_host: http://proxy-user:proxy-pass-0001@127.0.0.1:9/v1
`;
const PATH = '/v1/virtual-keys';
const SECRET_1 = 'sk-provider-SECRET-one-0001';
const SECRET_2 = 'sk-provider-SECRET-two-0002';
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const MASTER = MasterKey.generate();

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await FakeOpenAI.start();
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => fake.reset());

/** A chat request naming a virtual key (by header, or `config` inline); the provider's Authorization as received. */
async function chatVia(gw: TestGateway, key: string, vk: string, how: 'header' | 'config' = 'header'): Promise<{ status: number; auth: unknown; code: unknown }> {
  const headers: Record<string, string> = { 'x-gateway-api-key': key, 'content-type': 'application/json' };
  if (how === 'header') headers['x-gateway-virtual-key'] = vk;
  else headers['x-gateway-config'] = JSON.stringify({ virtual_key: vk });
  const before = fake.requests.length;
  const a = await post(`${gw.url}/v1/chat/completions`, headers, CHAT);
  return { status: a.status, auth: fake.requests.length > before ? fake.requests.at(-1)!.headers.authorization : undefined, code: a.json?.error?.code };
}

const vkBody = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', custom_host: fake.baseUrl, api_key: SECRET_1, ...extra });

describe('/v1/virtual-keys (memory store, master key set)', () => {
  let gw: TestGateway;
  const api = (m: string, p: string, k: string | undefined, b?: unknown) => callApi(gw.url, m, p, k, b);
  beforeAll(async () => {
    // The file's path as `--bootstrap` gives it: messages name the file, never where it lies.
    gw = await startGateway({ options: { bootstrap: '/srv/sluice/gateway-bootstrap.yaml' }, bootstrapYaml: bootstrap(), masterKey: MASTER.text });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('POST makes a key in the caller\'s workspace; the answer shows which secrets are set, never their values; a request using it reaches the provider with the secret', async () => {
    const r = await api('POST', PATH, KEY_A, vkBody({ id: 'team-a-openai' }));
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: 'team-a-openai',
      object: 'virtual_key',
      provider: 'openai',
      custom_host: fake.baseUrl,
      secrets_set: ['api_key'],
      workspace_id: 'ws-a',
      organisation_id: 'org-1',
      created_at: expect.any(String),
      last_updated_at: r.json.created_at,
      version_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      source: 'api',
      read_only: false,
    });
    expect(r.text).not.toContain(SECRET_1);
    const used = await chatVia(gw, KEY_A, 'team-a-openai');
    expect(used).toMatchObject({ status: 200, auth: `Bearer ${SECRET_1}` });
    expect((await chatVia(gw, KEY_A, 'team-a-openai', 'config')).auth).toBe(`Bearer ${SECRET_1}`);

    const got = await api('GET', `${PATH}/team-a-openai`, KEY_A);
    expect(got.json).toEqual(r.json);
    const list = await api('GET', PATH, KEY_A);
    expect(list.json.data).toContainEqual(r.json);
    for (const text of [got.text, list.text, gw.logText()]) expect(text).not.toContain(SECRET_1);
  });

  it('PUT rotates: a new version_id, and the very next request uses the new secret (no stale plan), by header and by config', async () => {
    const made = (await api('POST', PATH, KEY_A, vkBody({ id: 'rotating' }))).json;
    expect((await chatVia(gw, KEY_A, 'rotating')).auth).toBe(`Bearer ${SECRET_1}`);
    expect((await chatVia(gw, KEY_A, 'rotating', 'config')).auth).toBe(`Bearer ${SECRET_1}`);
    const put = await api('PUT', `${PATH}/rotating`, KEY_A, vkBody({ api_key: SECRET_2 }));
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ id: 'rotating', created_at: made.created_at, secrets_set: ['api_key'] });
    expect(put.json.version_id).not.toBe(made.version_id);
    expect(put.text).not.toContain(SECRET_2);
    expect((await chatVia(gw, KEY_A, 'rotating')).auth).toBe(`Bearer ${SECRET_2}`);
    expect((await chatVia(gw, KEY_A, 'rotating', 'config')).auth).toBe(`Bearer ${SECRET_2}`);
    // PUT replaces the whole key: a secret left out is removed
    const bare = await api('PUT', `${PATH}/rotating`, KEY_A, { provider: 'openai', custom_host: fake.baseUrl });
    expect(bare.json.secrets_set).toEqual([]);
    expect((await chatVia(gw, KEY_A, 'rotating')).auth).toBeUndefined();
  });

  it('DELETE removes it: the next request using it is a 404 virtual_key_not_found', async () => {
    await api('POST', PATH, KEY_A, vkBody({ id: 'short-lived' }));
    expect((await chatVia(gw, KEY_A, 'short-lived')).status).toBe(200);
    const del = await api('DELETE', `${PATH}/short-lived`, KEY_A);
    expect(del.json).toEqual({ id: 'short-lived', object: 'virtual_key', deleted: true });
    expect(await chatVia(gw, KEY_A, 'short-lived')).toMatchObject({ status: 404, code: 'virtual_key_not_found' });
    expect((await api('GET', `${PATH}/short-lived`, KEY_A)).status).toBe(404);
    expect((await api('DELETE', `${PATH}/short-lived`, KEY_A)).status).toBe(404);
  });

  it('scope isolation: another workspace neither sees, changes nor uses it (404), and naming its workspace is a 403', async () => {
    await api('POST', PATH, KEY_A, vkBody({ id: 'a-private' }));
    for (const [m, b] of [['GET'], ['PUT', vkBody()], ['DELETE']] as const) {
      const r = await api(m, `${PATH}/a-private`, KEY_B, b);
      expect(r.status, m).toBe(404);
      expect(r.json.error.code).toBe('virtual_key_not_found');
    }
    expect((await api('GET', PATH, KEY_B)).json.data.map((k: { id: string }) => k.id)).not.toContain('a-private');
    // used in a request by another workspace's key: as unknown
    expect(await chatVia(gw, KEY_B, 'a-private')).toMatchObject({ status: 404, code: 'virtual_key_not_found', auth: undefined });
    expect(await chatVia(gw, KEY_B, 'a-private', 'config')).toMatchObject({ status: 404, code: 'virtual_key_not_found' });
    // and the operator's key, bound to no workspace, does not use it either (proxying ignores admin)
    expect((await chatVia(gw, TEST_KEY, 'a-private')).status).toBe(404);
    expect((await chatVia(gw, KEY_A, 'a-private')).auth).toBe(`Bearer ${SECRET_1}`);
    // 403s: naming another workspace, or a key that manages nothing
    const there = await api('POST', PATH, KEY_B, vkBody({ workspace_id: 'ws-a' }));
    expect(there.status).toBe(403);
    expect(there.json.error).toMatchObject({ code: 'forbidden_scope', param: 'workspace_id' });
    expect((await api('GET', `${PATH}?workspace_id=ws-a`, KEY_B)).status).toBe(403);
    for (const [m, p, b] of [['POST', PATH, vkBody()], ['GET', PATH], ['GET', `${PATH}/a-private`], ['PUT', `${PATH}/a-private`, vkBody()], ['DELETE', `${PATH}/a-private`]] as const) {
      const r = await api(m, p, KEY_NOWHERE, b);
      expect(r.status, `${m} ${p}`).toBe(403);
      expect(r.json.error).toMatchObject({ code: 'forbidden_scope', param: 'x-gateway-api-key' });
    }
    // an admin sees and manages it; it must name the workspace of what it makes
    expect((await api('GET', `${PATH}/a-private`, TEST_KEY)).json.workspace_id).toBe('ws-a');
    expect((await api('POST', PATH, TEST_KEY, vkBody())).json.error.param).toBe('workspace_id');
    const placed = await api('POST', PATH, TEST_KEY, vkBody({ id: 'placed-in-b', workspace_id: 'ws-b', organisation_id: 'org-1' }));
    expect(placed.status).toBe(201);
    expect((await chatVia(gw, KEY_B, 'placed-in-b')).status).toBe(200);
    // the scope cannot move
    expect((await api('PUT', `${PATH}/placed-in-b`, TEST_KEY, vkBody({ workspace_id: 'ws-a' }))).json.error).toMatchObject({ code: 'invalid_request_body', param: 'workspace_id' });
  });

  it('ids: generated when absent; a taken id is a 409 (the bootstrap file\'s too, naming it)', async () => {
    const gen = await api('POST', PATH, KEY_A, vkBody());
    expect(gen.json.id).toMatch(/^vk-[0-9a-f-]{36}$/);
    const dup = await api('POST', PATH, KEY_A, vkBody({ id: gen.json.id }));
    expect(dup.status).toBe(409);
    expect(dup.json.error).toMatchObject({ code: 'virtual_key_exists', param: 'id' });
    const declared = await api('POST', PATH, TEST_KEY, vkBody({ id: 'declared-vk', workspace_id: 'ws-a' }));
    expect(declared.status).toBe(409);
    expect(declared.json.error).toMatchObject({ code: 'virtual_key_exists', param: 'id' });
    expect(declared.json.error.message).toContain('the bootstrap file gateway-bootstrap.yaml');
    expect((await api('PUT', `${PATH}/${gen.json.id}`, KEY_A, vkBody({ id: 'other' }))).json.error.param).toBe('id');
  });

  it('the bootstrap file\'s keys are listed and read by every managing key (source bootstrap, read_only, no secret); PUT and DELETE are a 409 naming the file', async () => {
    const declaredView = {
      id: 'declared-vk',
      object: 'virtual_key',
      provider: 'openai',
      custom_host: fake.baseUrl,
      secrets_set: ['api_key'],
      workspace_id: null,
      organisation_id: null,
      created_at: null,
      last_updated_at: null,
      version_id: null,
      source: 'bootstrap',
      read_only: true,
    };
    await api('POST', PATH, KEY_A, vkBody({ id: 'a-made-beside' }));
    for (const key of [KEY_A, KEY_B, TEST_KEY]) {
      const list = await api('GET', PATH, key);
      expect(list.status).toBe(200);
      // the file's keys first, in its order; then the made ones this key sees
      expect(list.json.data.slice(0, 2).map((k: { id: string }) => k.id)).toEqual(['declared-vk', 'declared-proxy']);
      expect(list.json.data[0]).toEqual(declaredView);
      // secrets never, and a URL's userinfo redacted
      expect(list.json.data[1]).toMatchObject({ secrets_set: [], custom_host: 'http://[redacted]@127.0.0.1:9/v1', read_only: true });
      expect(list.text).not.toContain('sk-declared-provider-secret');
      expect(list.text).not.toContain('proxy-pass-0001');
      expect(list.json.data.filter((k: { source: string }) => k.source === 'api').every((k: { read_only: boolean }) => k.read_only === false)).toBe(true);
      expect(list.json.data.some((k: { id: string }) => k.id === 'a-made-beside')).toBe(key !== KEY_B);
      const one = await api('GET', `${PATH}/declared-vk`, key);
      expect(one.json).toEqual(declaredView);
    }
    // they live in no workspace: a query naming one lists the keys living there only
    const inA = await api('GET', `${PATH}?workspace_id=ws-a`, KEY_A);
    expect(inA.json.data.map((k: { id: string }) => k.id)).toContain('a-made-beside');
    expect(inA.json.data.some((k: { source: string }) => k.source === 'bootstrap')).toBe(false);
    // paged with the made keys: the total counts them
    const all = await api('GET', PATH, KEY_A);
    const first = await api('GET', `${PATH}?page_size=1&current_page=1`, KEY_A);
    expect(first.json).toMatchObject({ total: all.json.total, data: [{ id: 'declared-proxy' }] });

    for (const key of [KEY_A, TEST_KEY]) {
      for (const [m, b] of [['PUT', vkBody()], ['PUT', { provider: 'openai', not_a_field: 1 }], ['DELETE']] as const) {
        const r = await api(m, `${PATH}/declared-vk`, key, b);
        expect(r.status, `${m} ${JSON.stringify(b)}`).toBe(409);
        expect(r.json.error.code).toBe('virtual_key_read_only');
        expect(r.json.error.message).toContain('the bootstrap file gateway-bootstrap.yaml');
        expect(r.json.error.message).not.toContain('/srv/sluice');
      }
    }
    // refused, so unchanged: it still serves with the file's secret
    expect(await chatVia(gw, KEY_A, 'declared-vk')).toMatchObject({ status: 200, auth: 'Bearer sk-declared-provider-secret' });
    // a key that manages nothing still sees nothing
    expect((await api('GET', PATH, KEY_NOWHERE)).status).toBe(403);
    expect((await api('DELETE', `${PATH}/declared-vk`, KEY_NOWHERE)).status).toBe(403);
    expect(gw.logText()).not.toContain('sk-declared-provider-secret');
  });

  it('bodies are validated as the bootstrap file\'s keys and as a request would use them: 400 naming the field, never echoing a secret', async () => {
    for (const [b, code, param] of [
      [{ api_key: SECRET_1 }, 'invalid_request_body', 'provider'],
      [vkBody({ provider: 'nope' }), 'unknown_provider', 'provider'],
      [vkBody({ cloud_b_region: 'us-east-1' }), 'invalid_request_body', 'cloud_b_region'],
      [vkBody({ colour: 'red' }), 'invalid_request_body', ''],
      [vkBody({ id: 'has space' }), 'invalid_request_body', 'id'],
      [vkBody({ api_key: 42 }), 'invalid_request_body', 'api_key'],
      [vkBody({ custom_host: 'http://10.1.2.3/v1' }), 'custom_host_not_allowed', ''],
      [vkBody({ workspace_id: '' }), 'invalid_request_body', 'workspace_id'],
    ] as const) {
      const r = await api('POST', PATH, KEY_A, b);
      expect(r.status, JSON.stringify(b)).toBe(400);
      expect(r.json.error.code, JSON.stringify(b)).toBe(code);
      if (param) expect(r.json.error.param, JSON.stringify(b)).toBe(param);
      expect(r.text).not.toContain(SECRET_1);
    }
    expect((await api('GET', `${PATH}?page_size=-1`, KEY_A)).json.error.param).toBe('page_size');
    const patch = await api('PATCH', `${PATH}/x`, KEY_A, vkBody());
    expect(patch.status).toBe(405);
    expect(patch.headers.allow).toBe('GET, PUT, DELETE');
  });
});

describe('/v1/virtual-keys without a master key', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ bootstrapYaml: bootstrap() });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('refuses to store a secret (503 master_key_missing naming the field); a key without secrets is stored; the bootstrap file\'s keys work', async () => {
    const r = await callApi(gw.url, 'POST', PATH, KEY_A, vkBody({ id: 'no-master' }));
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ code: 'master_key_missing', type: 'server_error', param: 'api_key' });
    expect(r.text).not.toContain(SECRET_1);
    expect((await callApi(gw.url, 'GET', `${PATH}/no-master`, KEY_A)).status).toBe(404);
    const plain = await callApi(gw.url, 'POST', PATH, KEY_A, { id: 'local-model', provider: 'openai', custom_host: fake.baseUrl });
    expect(plain.status).toBe(201);
    expect(plain.json.secrets_set).toEqual([]);
    expect((await chatVia(gw, KEY_A, 'local-model')).status).toBe(200);
    expect(await chatVia(gw, KEY_A, 'declared-vk')).toMatchObject({ status: 200, auth: 'Bearer sk-declared-provider-secret' });
  });
});

describe('/v1/virtual-keys with --redis: sealed at rest, shared, kept across restarts', () => {
  let server: RedisServer;
  let gw1: TestGateway;
  let gw2: TestGateway;
  const start = (masterKey: string | null = MASTER.text) => startGateway({ options: { redis: server.url }, bootstrapYaml: bootstrap(), masterKey: masterKey ?? undefined });
  beforeAll(async () => {
    server = await startRedisServer();
    gw1 = await start();
    gw2 = await start();
  });
  afterAll(async () => {
    await gw1?.close();
    await gw2?.close();
    await server?.close();
  });

  it('made on one gateway, used through the other; the raw Redis value holds the secret sealed, never in clear', async () => {
    const store2 = gw2.gateway.stores.virtualKeys as RedisVirtualKeyStore;
    const ref = virtualKeyRef(A_SCOPE, 'shared-vk');
    const arrived = nextEvent<string>((cb) => store2.onRefreshed((f) => f === ref && cb(f)), 3000, 'the create on gw2');
    expect((await callApi(gw1.url, 'POST', PATH, KEY_A, vkBody({ id: 'shared-vk' }))).status).toBe(201);
    await arrived;
    expect((await chatVia(gw2, KEY_A, 'shared-vk')).auth).toBe(`Bearer ${SECRET_1}`);

    const conn = createRedis(server.url);
    try {
      await conn.waitUntilReady(3000);
      const raw = await conn.client.hget(virtualKeyKeys('sluice:').keys, ref);
      expect(raw).not.toBeNull();
      expect(raw).not.toContain(SECRET_1);
      expect(raw).not.toContain(Buffer.from(SECRET_1).toString('base64'));
      expect(JSON.parse(raw!).sealed).toMatchObject({ alg: 'A256GCM', kid: MASTER.key.id });
      expect(JSON.stringify(await conn.client.hgetall(virtualKeyKeys('sluice:').keys))).not.toContain('sk-declared-provider-secret');
    } finally {
      await conn.close();
    }
  });

  it('lists the bootstrap file\'s keys beside the shared made ones, read-only, and never writes them to Redis', async () => {
    const list = await callApi(gw2.url, 'GET', PATH, KEY_A);
    expect(list.json.data[0]).toMatchObject({ id: 'declared-vk', source: 'bootstrap', read_only: true, secrets_set: ['api_key'] });
    expect(list.text).not.toContain('sk-declared-provider-secret');
    const del = await callApi(gw2.url, 'DELETE', `${PATH}/declared-vk`, KEY_A);
    expect(del.json.error.code).toBe('virtual_key_read_only');
    expect((await chatVia(gw1, KEY_A, 'declared-vk')).auth).toBe('Bearer sk-declared-provider-secret');
  });

  it('rotated on one gateway, the other uses the new secret once the message arrives; a restart keeps it', async () => {
    await callApi(gw1.url, 'POST', PATH, KEY_A, vkBody({ id: 'rotated-vk' }));
    const store1 = gw1.gateway.stores.virtualKeys as RedisVirtualKeyStore;
    const ref = virtualKeyRef(A_SCOPE, 'rotated-vk');
    const arrived = nextEvent<string>((cb) => store1.onRefreshed((f) => f === ref && store1.get(f)?.value.api_key === SECRET_2 && cb(f)), 3000, 'the rotation on gw1');
    expect((await callApi(gw2.url, 'PUT', `${PATH}/rotated-vk`, KEY_A, vkBody({ api_key: SECRET_2 }))).status).toBe(200);
    await arrived;
    expect((await chatVia(gw1, KEY_A, 'rotated-vk')).auth).toBe(`Bearer ${SECRET_2}`);

    await gw2.close();
    gw2 = await start();
    expect((await chatVia(gw2, KEY_A, 'rotated-vk')).auth).toBe(`Bearer ${SECRET_2}`);
    expect((await callApi(gw2.url, 'GET', `${PATH}/rotated-vk`, KEY_A)).json.secrets_set).toEqual(['api_key']);
  });

  it('a gateway without the master key (or with another) refuses to start on that Redis, naming the variable', async () => {
    for (const key of [null, MasterKey.generate().text]) {
      let message = '';
      try {
        const gw = await start(key);
        await gw.close();
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toMatch(/virtual key\(s\) whose secrets this gateway cannot open.*SLUICE_MASTER_KEY/);
      expect(message).not.toContain(SECRET_1);
    }
  });
});
