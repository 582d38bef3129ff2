/**
 * A stored secret goes only where its owner said: exfiltration attempts against every kind of
 * virtual key (the bootstrap file's and ones made through /v1/virtual-keys, for each native provider
 * and OpenAI), one per destination field of the key's provider, by header and by config (inline,
 * inherited from a strategy level, saved), plus a change of provider and `@id`. Each is a 400
 * `virtual_key_destination_fixed` naming what the client sent, and a canary server on loopback,
 * which every attack points at, sees no connection. A key that opts in (`allow_client_destination`)
 * does send its secret where the client says: the canary then sees it, so the silence above is
 * the rule's doing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BootstrapSchema } from '../../src/config/bootstrap.js';
import { parseConfig, type Config } from '../../src/config/schema.js';
import { fieldMeta, PROVIDER_FIELDS, type ProviderFieldName } from '../../src/config/provider-fields.js';
import { defaultProviders, ProviderRegistry } from '../../src/providers/registry.js';
import { MasterKey } from '../../src/security/master-key.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';
import { FakeAzure } from '../fakes/azure-server.js';
import { FakeBedrock } from '../fakes/bedrock-server.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { FakeVertex } from '../fakes/vertex-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { callApi, post } from '../helpers/http.js';

/** A loopback server every attack aims at: it records each connection and request, and answers 404. */
class Canary {
  connections = 0;
  readonly requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  private constructor(private readonly server: http.Server) {}
  static async start(): Promise<Canary> {
    let self!: Canary;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        self.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"canary"}}');
      });
    });
    server.on('connection', () => self.connections++);
    self = new Canary(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return self;
  }
  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  get hostPort(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  /** Everything it was sent, as one text (to look for secrets in). */
  text(): string {
    return this.requests.map((r) => `${r.method} ${r.url}\n${JSON.stringify(r.headers)}\n${r.body}`).join('\n');
  }
  reset(): void {
    this.connections = 0;
    this.requests.length = 0;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const KEY_W = 'sk-test-keydest-workspace-0123456789';
const MASTER = MasterKey.generate();
const OPENAI_SECRET = 'sk-owner-openai-SECRET-0001';
const ANTHROPIC_SECRET = 'sk-ant-owner-SECRET-0002';
const AZURE_SECRET = 'azure0wnerSECRET0003azure0wnerSECRET';
const registry = new ProviderRegistry(defaultProviders());

let canary: Canary;
let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let azure: FakeAzure;
let bedrock: FakeBedrock;
let vertex: FakeVertex;
let gw: TestGateway;

/** One kind of virtual key: its provider, the owner's key (reaching the owner's fake), a request it serves, and how to tell its secret arrived. */
interface Kind {
  provider: string;
  key: () => Record<string, unknown>;
  model: string;
  /** Requests the owner's fake has received. */
  ownerSeen: () => number;
  /** The secret's strings: none may reach the canary, an answer or a log. */
  secrets: () => string[];
  /** Did this request to the canary carry the key's credential? (the opt-in case) */
  carriesCredential: (h: http.IncomingHttpHeaders) => boolean;
}

const KINDS: Kind[] = [
  {
    provider: 'openai',
    key: () => ({ provider: 'openai', api_key: OPENAI_SECRET, custom_host: openai.baseUrl, vendor_organization: 'org-owner' }),
    model: 'gpt-4o-mini',
    ownerSeen: () => openai.requests.length,
    secrets: () => [OPENAI_SECRET],
    carriesCredential: (h) => h.authorization === `Bearer ${OPENAI_SECRET}`,
  },
  {
    provider: 'anthropic',
    key: () => ({ provider: 'anthropic', api_key: ANTHROPIC_SECRET, custom_host: anthropic.baseUrl }),
    model: 'claude-3-5-haiku-latest',
    ownerSeen: () => anthropic.requests.length,
    secrets: () => [ANTHROPIC_SECRET],
    carriesCredential: (h) => h['x-api-key'] === ANTHROPIC_SECRET,
  },
  {
    provider: 'azure-openai',
    key: () => ({ provider: 'azure-openai', api_key: AZURE_SECRET, custom_host: `${azure.origin}/openai`, deployment_id: 'gpt4o-prod', api_version: '2024-10-21' }),
    model: 'gpt-4o',
    ownerSeen: () => azure.requests.filter((r) => r.path.startsWith('/openai/')).length,
    secrets: () => [AZURE_SECRET],
    carriesCredential: (h) => h['api-key'] === AZURE_SECRET,
  },
  {
    provider: 'azure-ai',
    key: () => ({ provider: 'azure-ai', api_key: AZURE_SECRET, custom_host: azure.origin, cloud_a_deployment_type: 'serverless' }),
    model: 'llama',
    ownerSeen: () => azure.requests.filter((r) => !r.path.startsWith('/openai/')).length,
    secrets: () => [AZURE_SECRET],
    carriesCredential: (h) => h.authorization === `Bearer ${AZURE_SECRET}`,
  },
  {
    provider: 'bedrock',
    key: () => ({
      provider: 'bedrock',
      custom_host: bedrock.url,
      cloud_b_access_key_id: bedrock.credentials.accessKeyId,
      cloud_b_secret_access_key: bedrock.credentials.secretAccessKey,
      cloud_b_region: bedrock.region,
    }),
    model: 'anthropic.claude-3-haiku-20240307-v1:0',
    ownerSeen: () => bedrock.requests.length,
    secrets: () => [bedrock.credentials.accessKeyId, bedrock.credentials.secretAccessKey],
    carriesCredential: (h) => String(h.authorization).includes(`Credential=${bedrock.credentials.accessKeyId}/`),
  },
  {
    provider: 'vertex-ai',
    key: () => ({
      provider: 'vertex-ai',
      custom_host: vertex.baseUrl,
      cloud_c_region: 'us-central1',
      cloud_c_project_id: 'owner-project',
      cloud_c_service_account_json: vertex.serviceAccount(),
    }),
    model: 'gemini-2.5-flash',
    ownerSeen: () => vertex.requests.length,
    secrets: () => [String(vertex.serviceAccount().private_key)],
    // The token the owner's service account was exchanged for, on the canary.
    carriesCredential: (h) => /^Bearer \S+/.test(String(h.authorization)),
  },
];

/** A value of field `f` that, were it used, would aim at the canary where the field can (a host), else another account or place. */
function attack(f: ProviderFieldName): unknown {
  switch (f) {
    case 'custom_host':
      return `${canary.origin}/v1`;
    case 'deployments':
      return [{ deployment_id: 'attacker-deployment', alias: 'gpt-4o', api_version: '2024-10-21', is_default: true }];
    case 'cloud_a_deployment_type':
      return 'managed';
    case 'cloud_c_service_account_json':
      // The owner's account, its token endpoint swapped for the canary.
      return vertex.serviceAccount({ token_uri: `${canary.origin}/token` });
    case 'cloud_b_region':
      return 'us-west-2';
    case 'cloud_c_region':
      return 'us-west2';
    case 'cloud_a_region':
      return 'westus2';
    default:
      return `attacker-${f.replaceAll('_', '-')}`;
  }
}

const headerOf = (f: ProviderFieldName): string | undefined => fieldMeta.get(PROVIDER_FIELDS[f])?.header;
const destinationsOf = (provider: string): ProviderFieldName[] => registry.get(provider).descriptor.fields.destinations as ProviderFieldName[];

/** The key ids of a kind: the bootstrap file's, one made through the API, and one made that lets clients choose custom_host. */
const ids = (k: Kind) => ({ declared: `boot-${k.provider}`, made: `made-${k.provider}`, open: `open-${k.provider}` });

const chatBody = (k: Kind) => ({ model: k.model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
const chat = (k: Kind, headers: Record<string, string>) => post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-api-key': KEY_W, ...headers }), chatBody(k));

beforeAll(async () => {
  canary = await Canary.start();
  openai = await FakeOpenAI.start();
  anthropic = await FakeAnthropic.start(ANTHROPIC_SECRET);
  azure = await FakeAzure.start({ apiKey: AZURE_SECRET, deployments: { 'gpt4o-prod': 'gpt-4o' } });
  bedrock = await FakeBedrock.start();
  vertex = await FakeVertex.start();
  const savedConfigs = new Map<string, Config>();
  for (const k of KINDS) {
    // Saved configs naming the bootstrap file's keys are checked at start (see below); made keys' at request time.
    savedConfigs.set(`saved-${ids(k).made}`, parseConfig({ virtual_key: ids(k).made, custom_host: `${canary.origin}/v1` }));
  }
  gw = await startGateway({
    masterKey: MASTER.text,
    savedConfigs,
    bootstrap: BootstrapSchema.parse({
      api_keys: [{ key: KEY_W, name: 'team', workspace_id: 'ws-keydest', organisation_id: 'org-keydest' }],
      virtual_keys: Object.fromEntries(KINDS.map((k) => [ids(k).declared, k.key()])),
    }),
  });
  for (const k of KINDS) {
    for (const [id, extra] of [
      [ids(k).made, {}],
      [ids(k).open, { allow_client_destination: ['custom_host'] }],
    ] as const) {
      const r = await callApi(gw.url, 'POST', '/v1/virtual-keys', KEY_W, { id, ...k.key(), ...extra });
      expect(r.status, r.text).toBe(201);
    }
  }
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([canary?.close(), openai?.close(), anthropic?.close(), azure?.close(), bedrock?.close(), vertex?.close()]);
});

/** A request shape: the headers it sends, and the param its refusal must name. */
interface Shape {
  name: string;
  headers: Record<string, string>;
  param: string;
}

/** Every attack on key `id` of kind `k`. */
function shapes(k: Kind, id: string, saved: boolean): Shape[] {
  const out: Shape[] = [];
  for (const f of destinationsOf(k.provider)) {
    const h = headerOf(f);
    if (h !== undefined) out.push({ name: `${f} by header ${h}`, headers: { 'x-gateway-virtual-key': id, [h]: String(attack(f)) }, param: h });
    out.push({ name: `${f} in an inline config`, headers: { 'x-gateway-config': JSON.stringify({ virtual_key: id, [f]: attack(f) }) }, param: `config.${f}` });
    out.push({
      name: `${f} on a target of a fallback`,
      headers: { 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'sk-own', custom_host: openai.baseUrl }, { virtual_key: id, [f]: attack(f) }] }) },
      param: `config.targets[1].${f}`,
    });
  }
  const host = `${canary.origin}/v1`;
  out.push(
    { name: 'custom_host by header, key named as @id', headers: { 'x-gateway-provider': `@${id}`, 'x-gateway-custom-host': host }, param: 'x-gateway-custom-host' },
    {
      name: 'custom_host of a strategy level, inherited',
      headers: { 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, custom_host: host, targets: [{ virtual_key: id }] }) },
      param: 'config.custom_host',
    },
    {
      name: 'custom_host by header under a strategy config, inherited two levels down',
      headers: {
        'x-gateway-custom-host': host,
        'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ strategy: { mode: 'loadbalance' }, targets: [{ virtual_key: id }] }] }),
      },
      param: 'x-gateway-custom-host',
    },
    {
      name: 'another provider by header',
      headers: { 'x-gateway-virtual-key': id, 'x-gateway-provider': k.provider === 'openai' ? 'groq' : 'openai' },
      param: 'x-gateway-provider',
    },
    { name: 'another provider in a config', headers: { 'x-gateway-config': JSON.stringify({ virtual_key: id, provider: 'openai-compatible' }) }, param: 'config.provider' },
  );
  if (saved) out.push({ name: 'custom_host in a saved config', headers: { 'x-gateway-config': `saved-${id}` }, param: 'config.custom_host' });
  return out;
}

describe.each(KINDS)('a virtual key for $provider', (k) => {
  describe.each(['declared', 'made'] as const)('%s', (which) => {
    const id = ids(k)[which];

    it('serves a request that leaves its destination alone, at the owner\'s host', async () => {
      const before = k.ownerSeen();
      const a = await chat(k, { 'x-gateway-virtual-key': id });
      expect(a.status, a.text).toBe(200);
      expect(k.ownerSeen()).toBeGreaterThan(before);
    });

    it('refuses every attempt to move its secret (a 400 naming the field), and the canary sees nothing', async () => {
      canary.reset();
      for (const s of shapes(k, id, which === 'made')) {
        const a = await chat(k, s.headers);
        expect(a.status, `${s.name}: ${a.text}`).toBe(400);
        expect(a.json.error, s.name).toMatchObject({ code: 'virtual_key_destination_fixed', param: s.param });
        for (const secret of k.secrets()) expect(a.text, s.name).not.toContain(secret);
      }
      expect(canary.connections).toBe(0);
      expect(canary.requests).toEqual([]);
      for (const secret of k.secrets()) expect(gw.logText()).not.toContain(secret);
    });
  });

  it('a key that lets clients choose custom_host sends its credential there (the opt-in), and still fixes its other destination fields', async () => {
    canary.reset();
    const id = ids(k).open;
    await chat(k, { 'x-gateway-virtual-key': id, 'x-gateway-custom-host': `${canary.origin}/v1` });
    expect(canary.requests.length).toBeGreaterThan(0);
    expect(k.carriesCredential(canary.requests[0]!.headers)).toBe(true);
    const others = destinationsOf(k.provider).filter((f) => f !== 'custom_host');
    for (const f of others) {
      const a = await chat(k, { 'x-gateway-config': JSON.stringify({ virtual_key: id, [f]: attack(f) }) });
      expect(a.json?.error, f).toMatchObject({ code: 'virtual_key_destination_fixed', param: `config.${f}` });
    }
  });
});

describe('the issue\'s shape: a {region} custom host and a region aimed at the canary', () => {
  it.each(['declared', 'made'] as const)('is refused for a %s bedrock key; nothing reaches the canary', async (which) => {
    canary.reset();
    const k = KINDS.find((x) => x.provider === 'bedrock')!;
    const a = await chat(k, { 'x-gateway-virtual-key': ids(k)[which], 'x-gateway-custom-host': 'http://{region}/', 'x-gateway-cloud-b-region': canary.hostPort });
    expect(a.status).toBe(400);
    // The region is not a region name: refused as a header before the key's rule is reached.
    expect(a.json.error).toMatchObject({ code: 'invalid_header', param: 'x-gateway-cloud-b-region' });
    // With a well-formed region, the client's custom_host is what the key refuses.
    const b = await chat(k, { 'x-gateway-virtual-key': ids(k)[which], 'x-gateway-custom-host': 'http://{region}/', 'x-gateway-cloud-b-region': 'us-west-2' });
    expect(b.status).toBe(400);
    expect(b.json.error).toMatchObject({ code: 'virtual_key_destination_fixed', param: 'x-gateway-custom-host' });
    expect(canary.connections).toBe(0);
  });
});

describe('a saved config that moves a bootstrap key\'s secret', () => {
  it('stops the start, naming the config and the field', async () => {
    const start = startGateway({
      bootstrap: BootstrapSchema.parse({ virtual_keys: { owner: KINDS[0]!.key() } }),
      savedConfigs: new Map([['steal', parseConfig({ virtual_key: 'owner', custom_host: `${canary.origin}/v1` })]]),
    });
    await expect(start).rejects.toThrow(/saved config steal.*config\.custom_host.*virtual key "owner"/s);
    expect(canary.connections).toBe(0);
  });
});

describe('a service account\'s token_uri', () => {
  it('is the owner\'s: the token exchange of a key\'s stored account goes to its own token_uri', async () => {
    const k = KINDS.find((x) => x.provider === 'vertex-ai')!;
    // An account of its own (its own token_uri), so that no token is cached for it yet.
    const sa = vertex.serviceAccount({ token_uri: `${vertex.baseUrl}/token?account=keydest` });
    const r = await callApi(gw.url, 'POST', '/v1/virtual-keys', KEY_W, { ...k.key(), id: 'vertex-own-token-uri', cloud_c_service_account_json: sa });
    expect(r.status, r.text).toBe(201);
    canary.reset();
    const before = vertex.exchanges;
    const a = await chat(k, { 'x-gateway-config': JSON.stringify({ virtual_key: 'vertex-own-token-uri' }) });
    expect(a.status, a.text).toBe(200);
    expect(vertex.exchanges).toBe(before + 1);
    expect(canary.connections).toBe(0);
  });

  it('cannot be replaced by the client, even with the owner\'s own account whose token_uri is the canary', async () => {
    const k = KINDS.find((x) => x.provider === 'vertex-ai')!;
    canary.reset();
    for (const id of [ids(k).declared, ids(k).made, ids(k).open]) {
      const a = await chat(k, { 'x-gateway-config': JSON.stringify({ virtual_key: id, cloud_c_service_account_json: attack('cloud_c_service_account_json') }) });
      expect(a.json?.error, id).toMatchObject({ code: 'virtual_key_destination_fixed', param: 'config.cloud_c_service_account_json' });
      expect(a.text).not.toContain(k.secrets()[0]!.slice(40, 80));
    }
    expect(canary.connections).toBe(0);
  });
});

describe('allow_client_destination is validated', () => {
  it('POST: a field that is not a destination of the key\'s provider, or no field at all, is a 400 naming allow_client_destination', async () => {
    const bad = [
      { provider: 'openai', api_key: 'sk-x', allow_client_destination: ['cloud_b_region'] },
      { provider: 'openai', api_key: 'sk-x', allow_client_destination: ['api_key'] },
      { provider: 'bedrock', api_key: 'sk-x', allow_client_destination: 'yes' },
    ];
    for (const body of bad) {
      const r = await callApi(gw.url, 'POST', '/v1/virtual-keys', KEY_W, body);
      expect(r.status, r.text).toBe(400);
      expect(r.json.error.param, JSON.stringify(body)).toMatch(/^allow_client_destination/);
    }
  });

  it('is shown by GET (it is not a secret), and PUT can take it back', async () => {
    const made = await callApi(gw.url, 'POST', '/v1/virtual-keys', KEY_W, { id: 'opt-in-rotated', provider: 'openai', api_key: OPENAI_SECRET, custom_host: openai.baseUrl, allow_client_destination: true });
    expect(made.json.allow_client_destination).toBe(true);
    const k = KINDS[0]!;
    canary.reset();
    await chat(k, { 'x-gateway-virtual-key': 'opt-in-rotated', 'x-gateway-vendor-project': 'proj-client', 'x-gateway-custom-host': `${canary.origin}/v1` });
    expect(canary.requests[0]?.headers['openai-project']).toBe('proj-client');
    const put = await callApi(gw.url, 'PUT', '/v1/virtual-keys/opt-in-rotated', KEY_W, { provider: 'openai', api_key: OPENAI_SECRET, custom_host: openai.baseUrl });
    expect(put.status).toBe(200);
    canary.reset();
    const a = await chat(k, { 'x-gateway-virtual-key': 'opt-in-rotated', 'x-gateway-custom-host': `${canary.origin}/v1` });
    expect(a.json.error).toMatchObject({ code: 'virtual_key_destination_fixed', param: 'x-gateway-custom-host' });
    expect(canary.connections).toBe(0);
  });
});
