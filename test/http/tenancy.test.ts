/**
 * Tenancy is the (organisation, workspace) pair. A matrix over two organisations that both have a
 * workspace `ws-1` and a workspace `ws-2`, every kind of gateway key (the operator's unbound admin
 * key, each organisation's admin key, each workspace's key), every management resource (api-keys,
 * virtual-keys, policies, guardrails, prompts, logs) and each operation on it, then every use of a
 * resource in a request: another tenant's virtual key, prompt, guardrail or policy never applies.
 * Run over the memory stores and over a real Redis server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { callApi, post, type Reply } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { MasterKey } from '../../src/security/master-key.js';

type Org = 'org-1' | 'org-2';
type Ws = 'ws-1' | 'ws-2';
interface Tenant {
  org: Org;
  ws: Ws;
}
interface Caller {
  name: string;
  key: string;
  /** An admin key: of one organisation, or of every one (undefined). */
  admin?: { org: Org | undefined };
  /** A workspace key's tenant. */
  tenant?: Tenant;
}

const TENANTS: Tenant[] = [
  { org: 'org-1', ws: 'ws-1' },
  { org: 'org-1', ws: 'ws-2' },
  { org: 'org-2', ws: 'ws-1' },
  { org: 'org-2', ws: 'ws-2' },
];
const tag = (t: Tenant): string => `${t.org}/${t.ws}`;
const keyOf = (t: Tenant): string => `sk-tenancy-${t.org}-${t.ws}-0123456789`;
const WS_KEYS: Caller[] = TENANTS.map((t) => ({ name: tag(t), key: keyOf(t), tenant: t }));
const ORG_ADMIN: Record<Org, Caller> = {
  'org-1': { name: 'org-1 admin', key: 'sk-tenancy-org-1-admin-0123456789', admin: { org: 'org-1' } },
  'org-2': { name: 'org-2 admin', key: 'sk-tenancy-org-2-admin-0123456789', admin: { org: 'org-2' } },
};
const ADMIN: Caller = { name: 'operator admin', key: TEST_KEY, admin: { org: undefined } };
const CALLERS: Caller[] = [ADMIN, ORG_ADMIN['org-1'], ORG_ADMIN['org-2'], ...WS_KEYS];

/** The model the test holds of who may manage what lives in `owner` (written out, not src's rule). */
function mayManage(c: Caller, owner: Tenant): boolean {
  if (c.admin) return c.admin.org === undefined || c.admin.org === owner.org;
  return c.tenant!.org === owner.org && c.tenant!.ws === owner.ws;
}

const BOOTSTRAP = `
api_keys:
${TENANTS.map((t) => `  - { key: ${keyOf(t)}, name: ${tag(t)}, workspace_id: ${t.ws}, organisation_id: ${t.org} }`).join('\n')}
  - { key: ${ORG_ADMIN['org-1'].key}, name: org-1-admin, organisation_id: org-1, scopes: [admin] }
  - { key: ${ORG_ADMIN['org-2'].key}, name: org-2-admin, organisation_id: org-2, scopes: [admin] }
`;

const secretOf = (t: Tenant): string => `sk-provider-secret-${t.org}-${t.ws}`;
const CHAT = { model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'say alpha' }] };

/** One management resource kind: its path, a create body, its not-found code and how an item is addressed. */
interface Kind {
  name: string;
  path: string;
  body(t: Tenant, fake: FakeOpenAI): Record<string, unknown>;
  notFound: string;
  /** PUT's body for an existing item. */
  change(t: Tenant, fake: FakeOpenAI): Record<string, unknown>;
}

const KINDS: Kind[] = [
  {
    name: 'guardrails',
    path: '/v1/guardrails',
    notFound: 'guardrail_not_found',
    body: () => ({ name: 'No alpha', checks: [{ id: 'default.contains', parameters: { words: ['alpha'], operator: 'none' } }], actions: { onFail: 'block' } }),
    change: () => ({ name: 'No alpha', checks: [{ id: 'default.contains', parameters: { words: ['alpha', 'beta'], operator: 'none' } }], actions: { onFail: 'block' } }),
  },
  {
    name: 'prompts',
    path: '/v1/prompts',
    notFound: 'prompt_not_found',
    body: (t) => ({ name: 'Greeter', model: 'gpt-4o-mini', messages: [{ role: 'system', content: `Tenant ${tag(t)} greets {{who}}.` }], parameters: { max_tokens: 10 } }),
    change: (t) => ({ name: 'Greeter', model: 'gpt-4o-mini', messages: [{ role: 'system', content: `Tenant ${tag(t)} greets {{who}} again.` }], parameters: { max_tokens: 10 } }),
  },
  {
    name: 'policies',
    path: '/v1/policies/usage-limits',
    notFound: 'policy_not_found',
    body: () => ({ name: 'Tiny', type: 'tokens', conditions: [], group_by: [], credit_limit: 1 }),
    change: () => ({ name: 'Tiny', type: 'tokens', conditions: [], group_by: [], credit_limit: 2 }),
  },
  {
    name: 'virtual-keys',
    path: '/v1/virtual-keys',
    notFound: 'virtual_key_not_found',
    // the same id in every tenant: each its own key, each with its own secret
    body: (t, fake) => ({ id: 'vk-same', provider: 'openai', custom_host: fake.baseUrl, api_key: secretOf(t) }),
    change: (t, fake) => ({ provider: 'openai', custom_host: fake.baseUrl, api_key: secretOf(t) }),
  },
];

/** Where an admin puts what it makes: it names the tenant (an organisation's admin names only the workspace). */
function placement(c: Caller, t: Tenant): Record<string, string> {
  if (!c.admin) return {};
  return c.admin.org === undefined ? { workspace_id: t.ws, organisation_id: t.org } : { workspace_id: t.ws };
}

for (const backend of ['memory', 'redis'] as const) {
  describe(`tenancy matrix (${backend})`, () => {
    let fake: FakeOpenAI;
    let server: RedisServer | undefined;
    let gw: TestGateway;
    const api = (c: Caller, m: string, p: string, b?: unknown): Promise<Reply> => callApi(gw.url, m, p, c.key, b);
    /** id of each kind's item, per tenant (made by the tenant's own key). */
    const made = new Map<string, Map<string, string>>();
    const idOf = (k: Kind, t: Tenant): string => made.get(k.name)!.get(tag(t))!;

    async function chat(c: Caller, headers: Record<string, string> = {}, body: unknown = CHAT): Promise<{ status: number; code: unknown; auth: unknown; sent: any }> {
      const before = fake.requests.length;
      const a = await post(`${gw.url}/v1/chat/completions`, { 'x-gateway-api-key': c.key, 'content-type': 'application/json', ...headers }, body);
      const last = fake.requests.length > before ? fake.requests.at(-1)! : undefined;
      return { status: a.status, code: a.json?.error?.code, auth: last?.headers.authorization, sent: last?.body };
    }

    beforeAll(async () => {
      fake = await FakeOpenAI.start();
      if (backend === 'redis') server = await startRedisServer();
      gw = await startGateway({
        bootstrapYaml: BOOTSTRAP,
        masterKey: MasterKey.generate().text,
        options: server ? { redis: server.url } : {},
      });
      for (const k of KINDS) {
        const ids = new Map<string, string>();
        for (const c of WS_KEYS) {
          const r = await api(c, 'POST', k.path, k.body(c.tenant!, fake));
          expect(r.status, `${c.name} POST ${k.path}: ${r.text}`).toBe(201);
          ids.set(c.name, r.json.id);
        }
        made.set(k.name, ids);
      }
    });
    afterAll(async () => {
      await gw?.close();
      await fake?.close();
      await server?.close();
    });

    for (const k of KINDS) {
      describe(k.name, () => {
        // a virtual key's id is the same in every tenant: an admin seeing several names the one it means
        const addr = (k0: Kind, c: Caller, t: Tenant): string => {
          const id = idOf(k0, t);
          return k0.name === 'virtual-keys' && c.admin ? `${k0.path}/${id}?${new URLSearchParams(placement(ADMIN, t))}` : `${k0.path}/${id}`;
        };

        it('list: each caller sees exactly what it manages', async () => {
          for (const c of CALLERS) {
            const r = await api(c, 'GET', `${k.path}?page_size=100`);
            expect(r.status, `${c.name} list`).toBe(200);
            const seen = new Set((r.json.data as { workspace_id: string | null; organisation_id: string | null }[]).map((x) => `${x.organisation_id}/${x.workspace_id}`));
            for (const t of TENANTS) expect(seen.has(tag(t)), `${c.name} lists ${tag(t)}'s ${k.name}`).toBe(mayManage(c, t));
          }
        });

        it('get, update and delete: another tenant\'s item is a 404 as an unknown one, and stays as it was', async () => {
          for (const c of CALLERS) {
            for (const t of TENANTS) {
              const where = `${c.name} on ${tag(t)}'s`;
              const got = await api(c, 'GET', addr(k, c, t));
              if (mayManage(c, t)) {
                expect(got.status, `${where} GET`).toBe(200);
                continue;
              }
              if (k.name === 'virtual-keys' && !c.admin) {
                // the id names the caller's own key (every tenant has a vk-same): never another tenant's
                expect(got.status, `${where} GET`).toBe(200);
                expect([got.json.organisation_id, got.json.workspace_id], where).toEqual([c.tenant!.org, c.tenant!.ws]);
                continue;
              }
              // (an admin naming another organisation in the query is refused for naming it: 403)
              const refused = k.name === 'virtual-keys' && c.admin ? 403 : 404;
              expect(got.status, `${where} GET`).toBe(refused);
              expect(got.json.error.code).toBe(refused === 404 ? k.notFound : 'forbidden_scope');
              const before = await api(ADMIN, 'GET', addr(k, ADMIN, t));
              const put = await api(c, 'PUT', addr(k, c, t), k.change(t, fake));
              expect([403, 404], `${where} PUT: ${put.text}`).toContain(put.status);
              const del = await api(c, 'DELETE', addr(k, c, t));
              expect(del.status, `${where} DELETE`).toBe(refused);
              const after = await api(ADMIN, 'GET', addr(k, ADMIN, t));
              expect(after.json, `${where}: unchanged`).toEqual(before.json);
            }
          }
          // those who manage it may change it
          for (const t of TENANTS) {
            for (const c of [ORG_ADMIN[t.org], WS_KEYS.find((w) => w.tenant === t)!]) {
              const put = await api(c, 'PUT', addr(k, c, t), k.change(t, fake));
              expect(put.status, `${c.name} PUT ${tag(t)}'s: ${put.text}`).toBe(200);
            }
          }
        });

        it('create: naming another organisation is a 403; an organisation admin naming a workspace id places it in its own organisation', async () => {
          const other = await api(ORG_ADMIN['org-2'], 'POST', k.path, { ...k.body({ org: 'org-2', ws: 'ws-1' }, fake), ...(k.name === 'virtual-keys' ? { id: 'vk-planted' } : {}), organisation_id: 'org-1', workspace_id: 'ws-1' });
          expect(other.status).toBe(403);
          expect(other.json.error).toMatchObject({ code: 'forbidden_scope', param: 'organisation_id' });
          for (const c of WS_KEYS) {
            const r = await api(c, 'POST', k.path, { ...k.body(c.tenant!, fake), ...(k.name === 'virtual-keys' ? { id: 'vk-x' } : {}), organisation_id: c.tenant!.org === 'org-1' ? 'org-2' : 'org-1' });
            expect(r.status, `${c.name} naming another organisation`).toBe(403);
          }
          // org-2's admin "in ws-1": that is org-2's ws-1, which org-1's ws-1 never sees
          const planted = await api(ORG_ADMIN['org-2'], 'POST', k.path, { ...k.body({ org: 'org-2', ws: 'ws-1' }, fake), ...(k.name === 'virtual-keys' ? { id: 'vk-planted' } : {}), workspace_id: 'ws-1' });
          expect(planted.status).toBe(201);
          const id = planted.json.id as string;
          const o1w1 = WS_KEYS[0]!;
          expect((await api(o1w1, 'GET', `${k.path}/${id}`)).status).toBe(404);
          expect((await api(WS_KEYS[2]!, 'GET', `${k.path}/${id}`)).status).toBe(200);
          expect((await api(ORG_ADMIN['org-1'], 'GET', `${k.path}/${id}`)).status).toBe(404);
          await api(ORG_ADMIN['org-2'], 'DELETE', `${k.path}/${id}`);
        });
      });
    }

    it('virtual-key ids: another tenant\'s id is free (201, never a 409); taken only in its own scope', async () => {
      for (const c of WS_KEYS) {
        const again = await api(c, 'POST', '/v1/virtual-keys', { id: 'vk-same', provider: 'openai', custom_host: fake.baseUrl });
        expect(again.status, c.name).toBe(409);
        expect(again.json.error.code).toBe('virtual_key_exists');
      }
      const only = await api(WS_KEYS[0]!, 'POST', '/v1/virtual-keys', { id: 'vk-only-o1w1', provider: 'openai', custom_host: fake.baseUrl });
      expect(only.status).toBe(201);
      for (const c of WS_KEYS.slice(1)) {
        const probe = await api(c, 'POST', '/v1/virtual-keys', { id: 'vk-only-o1w1', provider: 'openai', custom_host: fake.baseUrl });
        expect(probe.status, `${c.name} takes an id org-1/ws-1 uses`).toBe(201);
        expect((await api(c, 'DELETE', '/v1/virtual-keys/vk-only-o1w1')).status).toBe(200);
      }
      // an admin seeing the id in several scopes names the one it means
      const ambiguous = await api(ORG_ADMIN['org-1'], 'GET', '/v1/virtual-keys/vk-same');
      expect(ambiguous.status).toBe(400);
      expect(ambiguous.json.error).toMatchObject({ code: 'invalid_query_parameter', param: 'workspace_id' });
      expect(ambiguous.text).not.toContain('org-2');
      // an id only another organisation uses is unknown to an admin naming its own workspace of that name
      expect((await api(ORG_ADMIN['org-2'], 'GET', '/v1/virtual-keys/vk-only-o1w1?workspace_id=ws-1')).status).toBe(404);
    });

    it('api-keys: only admins; an organisation admin makes, sees and revokes its organisation\'s keys only, and a key it makes "in ws-1" is its own ws-1', async () => {
      for (const c of WS_KEYS) {
        for (const [m, p] of [['GET', '/v1/api-keys'], ['POST', '/v1/api-keys']] as const) {
          const r = await api(c, m, p, m === 'POST' ? { name: 'x' } : undefined);
          expect(r.status, `${c.name} ${m}`).toBe(403);
        }
      }
      const o1 = await api(ORG_ADMIN['org-1'], 'POST', '/v1/api-keys', { name: 'o1-ws1', workspace_id: 'ws-1' });
      expect(o1.status).toBe(201);
      expect(o1.json).toMatchObject({ organisation_id: 'org-1', workspace_id: 'ws-1' });
      const o2 = await api(ORG_ADMIN['org-2'], 'POST', '/v1/api-keys', { name: 'o2-into-ws1', workspace_id: 'ws-1' });
      expect(o2.json).toMatchObject({ organisation_id: 'org-2', workspace_id: 'ws-1' });
      expect((await api(ORG_ADMIN['org-2'], 'POST', '/v1/api-keys', { name: 'x', organisation_id: 'org-1', workspace_id: 'ws-1' })).status).toBe(403);
      expect((await api(ORG_ADMIN['org-2'], 'POST', '/v1/api-keys', { name: 'x', scopes: ['admin'], organisation_id: 'org-1' })).status).toBe(403);
      // org-2 neither sees nor revokes org-1's key
      expect((await api(ORG_ADMIN['org-2'], 'GET', `/v1/api-keys/${o1.json.id}`)).status).toBe(404);
      expect((await api(ORG_ADMIN['org-2'], 'DELETE', `/v1/api-keys/${o1.json.id}`)).status).toBe(404);
      const listed = (await api(ORG_ADMIN['org-2'], 'GET', '/v1/api-keys')).json.data as { organisation_id: string }[];
      expect(listed.every((k) => k.organisation_id === 'org-2')).toBe(true);
      expect((await api(ORG_ADMIN['org-1'], 'GET', `/v1/api-keys/${o1.json.id}`)).status).toBe(200);
      // the attack: org-2's key "in ws-1" reaches none of org-1's ws-1 resources, by list or by id
      const minted: Caller = { name: 'org-2 minted ws-1', key: o2.json.key, tenant: { org: 'org-2', ws: 'ws-1' } };
      for (const k of KINDS) {
        const own = idOf(k, { org: 'org-1', ws: 'ws-1' });
        const r = await api(minted, 'GET', `${k.path}/${own}`);
        if (k.name === 'virtual-keys') expect(r.json.organisation_id).toBe('org-2'); // its own ws-1's vk-same
        else expect(r.status, k.name).toBe(404);
        const list = (await api(minted, 'GET', k.path)).json.data as { organisation_id: string | null }[];
        expect(list.every((x) => x.organisation_id === 'org-2'), k.name).toBe(true);
      }
      // and its requests are governed by its own tenant's policy (org-2/ws-1's), not org-1's: its
      // 1-token limit admits at most one request (while nothing is used), then refuses
      const policies = KINDS.find((k) => k.name === 'policies')!;
      const send = () => post(`${gw.url}/v1/chat/completions`, { 'x-gateway-api-key': minted.key, 'content-type': 'application/json', 'x-gateway-virtual-key': 'vk-same' }, CHAT);
      expect([200, 412]).toContain((await send()).status);
      const limited = await send();
      expect(limited.status).toBe(412);
      expect(limited.json.error.message).toContain(idOf(policies, { org: 'org-2', ws: 'ws-1' }));
      expect(limited.json.error.message).not.toContain(idOf(policies, { org: 'org-1', ws: 'ws-1' }));
      expect((await api(ORG_ADMIN['org-1'], 'DELETE', `/v1/api-keys/${o1.json.id}`)).status).toBe(200);
    });

    describe('requests use their own tenant\'s resources only', () => {
      it('a virtual key id resolves in the caller\'s own tenant: each gets its own secret; an id only another tenant has is a 404', async () => {
        for (const c of WS_KEYS) {
          const r = await chat(c, { 'x-gateway-virtual-key': 'vk-same' });
          // the tenant's tiny policy admits one request, then refuses before the provider; the secret is checked with the policy archived below
          expect([200, 412], c.name).toContain(r.status);
        }
        await api(ADMIN, 'POST', '/v1/virtual-keys', { id: 'vk-o1w1-only', provider: 'openai', custom_host: fake.baseUrl, api_key: 'sk-o1w1-only', workspace_id: 'ws-1', organisation_id: 'org-1' });
        for (const c of WS_KEYS.slice(1)) {
          const r = await chat(c, { 'x-gateway-virtual-key': 'vk-o1w1-only' });
          expect(r.status, c.name).toBe(404);
          expect(r.code).toBe('virtual_key_not_found');
          const viaConfig = await chat(c, { 'x-gateway-config': JSON.stringify({ virtual_key: 'vk-o1w1-only' }) });
          expect(viaConfig.code, c.name).toBe('virtual_key_not_found');
          const viaAt = await chat(c, { 'x-gateway-provider': '@vk-o1w1-only' });
          expect(viaAt.auth, c.name).toBeUndefined();
        }
      });

      it('a policy applies to its own tenant only: org-1/ws-1\'s 1-token policy refuses org-1/ws-1, not org-2/ws-1; archived, each key reaches the provider with its own secret', async () => {
        // every tenant has a 1-token policy: it admits at most one request (while nothing is used)
        for (const c of WS_KEYS) expect([200, 412], c.name).toContain((await chat(c, { 'x-gateway-virtual-key': 'vk-same' })).status);
        for (const c of WS_KEYS) {
          // then each is refused by its own
          const r = await chat(c, { 'x-gateway-virtual-key': 'vk-same' });
          expect(r.status, c.name).toBe(412);
        }
        const policies = KINDS.find((k) => k.name === 'policies')!;
        // archive org-2's two and org-1/ws-2's: only org-1/ws-1 stays limited
        for (const t of TENANTS.slice(1)) expect((await api(ORG_ADMIN[t.org], 'DELETE', `${policies.path}/${idOf(policies, t)}`)).status).toBe(200);
        expect((await chat(WS_KEYS[0]!, { 'x-gateway-virtual-key': 'vk-same' })).status).toBe(412);
        for (const c of WS_KEYS.slice(1)) {
          const r = await chat(c, { 'x-gateway-virtual-key': 'vk-same' });
          expect(r.status, c.name).toBe(200);
          expect(r.auth, c.name).toBe(`Bearer ${secretOf(c.tenant!)}`);
        }
        expect((await api(WS_KEYS[0]!, 'DELETE', `${policies.path}/${idOf(policies, TENANTS[0]!)}`)).status).toBe(200);
        expect((await chat(WS_KEYS[0]!, { 'x-gateway-virtual-key': 'vk-same' })).auth).toBe(`Bearer ${secretOf(TENANTS[0]!)}`);
      });

      it('a prompt by id or slug renders for its own tenant only; another tenant\'s is unknown', async () => {
        const prompts = KINDS.find((k) => k.name === 'prompts')!;
        for (const c of WS_KEYS) {
          for (const t of TENANTS) {
            const cfg = { virtual_key: 'vk-same', prompt_id: idOf(prompts, t) };
            const r = await chat(c, { 'x-gateway-config': JSON.stringify(cfg) }, { variables: { who: 'Ada' }, messages: [{ role: 'user', content: 'hello' }] });
            if (t === c.tenant) {
              expect(r.status, `${c.name} uses its own`).toBe(200);
              expect(JSON.stringify(r.sent)).toContain(`Tenant ${tag(t)} greets Ada`);
            } else {
              expect(r.status, `${c.name} uses ${tag(t)}'s`).toBe(400);
              expect(r.sent).toBeUndefined();
            }
          }
          // by slug: each tenant has its own "greeter" (no slug was taken across tenants)
          const bySlug = await chat(c, { 'x-gateway-config': JSON.stringify({ virtual_key: 'vk-same', prompt_id: 'greeter' }) }, { variables: { who: 'Bo' }, messages: [{ role: 'user', content: 'hi' }] });
          expect(JSON.stringify(bySlug.sent), c.name).toContain(`Tenant ${tag(c.tenant!)} greets Bo`);
        }
      });

      it('a guardrail by id or slug applies for its own tenant only; another tenant\'s is unknown', async () => {
        const guardrails = KINDS.find((k) => k.name === 'guardrails')!;
        for (const c of WS_KEYS) {
          for (const t of TENANTS) {
            const r = await chat(c, { 'x-gateway-config': JSON.stringify({ virtual_key: 'vk-same', input_guardrails: [idOf(guardrails, t)] }) });
            if (t === c.tenant) expect(r.status, `${c.name} uses its own`).toBe(446);
            else {
              expect(r.status, `${c.name} uses ${tag(t)}'s`).toBe(400);
              expect(r.sent).toBeUndefined();
            }
          }
          expect((await chat(c, { 'x-gateway-config': JSON.stringify({ virtual_key: 'vk-same', input_guardrails: ['no-alpha'] }) })).status, c.name).toBe(446);
        }
      });

      it('logs: each workspace key reads its own tenant\'s records; an organisation admin its organisation\'s, narrowed by workspace_id within it', async () => {
        const seen = async (c: Caller, q = ''): Promise<Set<string>> => {
          const r = await api(c, 'GET', `/v1/logs?page_size=100${q}`);
          expect(r.status, c.name).toBe(200);
          return new Set((r.json.data as { organisation_id?: string; workspace_id?: string }[]).map((x) => `${x.organisation_id}/${x.workspace_id}`));
        };
        for (const c of CALLERS) {
          const s = await seen(c);
          for (const t of TENANTS) expect(s.has(tag(t)), `${c.name} reads ${tag(t)}'s logs`).toBe(mayManage(c, t));
        }
        expect([...(await seen(ORG_ADMIN['org-2'], '&workspace_id=ws-1'))]).toEqual(['org-2/ws-1']);
        expect((await api(ORG_ADMIN['org-2'], 'GET', '/v1/logs?workspace_id=ws-1')).json.data.every((x: { organisation_id: string }) => x.organisation_id === 'org-2')).toBe(true);
        expect((await api(WS_KEYS[2]!, 'GET', '/v1/logs?workspace_id=ws-2')).status).toBe(403);
      });
    });
  });
}
