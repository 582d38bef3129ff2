/**
 * SSRF, table-driven, over every way the gateway builds an outbound URL: custom_host (IPv4 and IPv6
 * literal forms, decimal, octal and hex hosts, IPv4-mapped, userinfo tricks, localhost names, names
 * resolving to loopback), the `{region}` placeholder, Bedrock and Vertex regions, Azure resource and
 * AI Foundry endpoint names, built-in provider hosts, Vertex's token_uri and redirects, and the checks'
 * JWKS, webhook and log URLs. Names resolve through an injected resolver (no query leaves the
 * machine); canaries listen on loopback and must see no connection. The gateway trusts only
 * 127.0.0.2, where a redirector lives.
 */
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCheckHttp } from '../../src/checks/http.js';
import { createEgress, type Egress } from '../../src/security/egress.js';
import { HostGuard, type ResolvedAddress, type ResolveHost } from '../../src/security/host-guard.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';
import { chatRequest, deps, run } from '../checks/_helpers.js';

/** A TCP listener that counts connections (it answers nothing: the gateway must never get here). */
interface Canary {
  host: string;
  port: number;
  connections: number;
  close(): Promise<void>;
}

async function canary(host: string): Promise<Canary | undefined> {
  const c = { host, port: 0, connections: 0 } as Canary;
  const server = net.createServer((s) => {
    c.connections++;
    s.destroy();
  });
  const ok = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(0, host, () => resolve(true));
  });
  if (!ok) return undefined;
  c.port = (server.address() as AddressInfo).port;
  c.close = () => new Promise((resolve) => server.close(() => resolve()));
  return c;
}

const LOOPBACK: ResolvedAddress[] = [{ address: '127.0.0.1', family: 4 }];
/** Made-up and provider names → addresses. Built-in provider hosts resolve to loopback here on purpose. */
const NAMES: Record<string, ResolvedAddress[]> = {
  'canary.test': LOOPBACK,
  'v6.canary.test': [{ address: '::1', family: 6 }],
  'mapped.canary.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'private.canary.test': [{ address: '10.1.2.3', family: 4 }],
  'metadata.canary.test': [{ address: '169.254.169.254', family: 4 }],
  // One public address and one loopback: every address is checked, not the first.
  'mixed.canary.test': [{ address: '93.184.216.34', family: 4 }, ...LOOPBACK],
  'us-east-1.canary.test': LOOPBACK,
  'api.openai.com': LOOPBACK,
  'bedrock-runtime.us-east-1.amazonaws.com': LOOPBACK,
  'us-central1-aiplatform.googleapis.com': LOOPBACK,
  'myres.openai.azure.com': LOOPBACK,
  'ep.eastus.inference.ml.azure.com': LOOPBACK,
  'ep.eastus2.models.ai.azure.com': LOOPBACK,
  'oauth2.googleapis.com': LOOPBACK,
};
const lookups: string[] = [];
const resolveHost: ResolveHost = (hostname) => {
  lookups.push(hostname);
  const hit = NAMES[hostname.toLowerCase()];
  return hit ? Promise.resolve(hit) : Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
};

let v4: Canary;
let v6: Canary | undefined;
let gw: TestGateway;
/** On 127.0.0.2 (trusted): answers every request with a redirect to the v4 canary, counting requests. */
let redirector: http.Server;
let redirectorPort = 0;
let redirects = 0;
let privatePem = '';

beforeAll(async () => {
  v4 = (await canary('127.0.0.1'))!;
  v6 = await canary('::1');
  redirector = http.createServer((req, res) => {
    redirects++;
    res.writeHead(req.url === '/to-self' ? 302 : 307, { location: req.url === '/to-self' ? '/again' : `http://127.0.0.1:${v4.port}/token` }).end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.2', resolve));
  redirectorPort = (redirector.address() as AddressInfo).port;
  privatePem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  gw = await startGateway({ options: { 'trusted-hosts': '127.0.0.2' }, resolveHost });
});

afterAll(async () => {
  await gw?.close();
  await new Promise<void>((resolve) => redirector?.close(() => resolve()));
  await v4?.close();
  await v6?.close();
});

beforeEach(() => {
  redirects = 0;
});

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const BEDROCK_CHAT = { model: 'anthropic.claude-3-haiku', messages: [{ role: 'user', content: 'hi' }] };

function canaryConnections(): number {
  return v4.connections + (v6?.connections ?? 0);
}

interface Row {
  name: string;
  headers: () => Record<string, string>;
  body?: unknown;
  status: number;
  code: string;
  /** The field or header the 400 names, when it names one. */
  param?: string;
}

const P = (): number => v4.port;
const openai = (customHost: string) => () => ({ 'x-gateway-provider': 'openai', authorization: 'Bearer sk-x', 'x-gateway-custom-host': customHost });
/** An x-gateway-config header, built when the row runs (ports are known only then). */
const config = (cfg: () => Record<string, unknown>) => () => ({ 'x-gateway-config': JSON.stringify(cfg()) });

const CUSTOM_HOST_ROWS: Row[] = [
  ['dotted loopback', () => `http://127.0.0.1:${P()}/v1`],
  ['decimal host 2130706433', () => `http://2130706433:${P()}/v1`],
  ['octal host 0177.0.0.1', () => `http://0177.0.0.1:${P()}/v1`],
  ['hex host 0x7f.0.0.1', () => `http://0x7f.0.0.1:${P()}/v1`],
  ['hex host 0x7f000001', () => `http://0x7f000001:${P()}/v1`],
  ['short host 127.1', () => `http://127.1:${P()}/v1`],
  ['0.0.0.0', () => `http://0.0.0.0:${P()}/v1`],
  ['IPv6 loopback [::1]', () => `http://[::1]:${v6?.port ?? P()}/v1`],
  ['IPv4-mapped [::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${P()}/v1`],
  ['IPv4-mapped hex [::ffff:7f00:1]', () => `http://[::ffff:7f00:1]:${P()}/v1`],
  ['IPv4-mapped long form', () => `http://[0:0:0:0:0:ffff:127.0.0.1]:${P()}/v1`],
  ['IPv4-compatible [::127.0.0.1]', () => `http://[::127.0.0.1]:${P()}/v1`],
  ['NAT64 [64:ff9b::7f00:1]', () => `http://[64:ff9b::7f00:1]:${P()}/v1`],
  ['cloud metadata 169.254.169.254', () => `http://169.254.169.254:${P()}/latest`],
  ['localhost', () => `http://localhost:${P()}/v1`],
  ['LOCALHOST. (case, trailing dot)', () => `http://LOCALHOST.:${P()}/v1`],
  ['a.localhost', () => `http://a.localhost:${P()}/v1`],
  ['userinfo naming a public host', () => `http://api.openai.com@127.0.0.1:${P()}/v1`],
  ['userinfo with a port', () => `http://api.openai.com:443@127.0.0.1:${P()}/v1`],
  ['fragment-hidden host', () => `http://127.0.0.1:${P()}#@api.openai.com/v1`],
  ['name resolving to loopback', () => `http://canary.test:${P()}/v1`],
  ['name resolving to IPv6 loopback', () => `http://v6.canary.test:${v6?.port ?? P()}/v1`],
  ['name resolving to IPv4-mapped loopback', () => `http://mapped.canary.test:${P()}/v1`],
  ['name resolving to a private address', () => `http://private.canary.test:${P()}/v1`],
  ['name resolving to link-local metadata', () => `http://metadata.canary.test:${P()}/v1`],
  ['name resolving to public and loopback', () => `http://mixed.canary.test:${P()}/v1`],
].map(([name, url]) => ({
  name: `custom_host: ${name as string}`,
  // Read when the row runs: the canary's port is known only then.
  headers: () => openai((url as () => string)())(),
  status: 400,
  code: 'custom_host_not_allowed',
}));

const BUILDER_ROWS: Row[] = [
  {
    name: 'bedrock region with userinfo, host and port (header)',
    headers: () => ({ 'x-gateway-provider': 'bedrock', authorization: 'Bearer k', 'x-gateway-cloud-b-region': `x@127.0.0.1:${P()}/#` }),
    body: BEDROCK_CHAT,
    status: 400,
    code: 'invalid_header',
    param: 'x-gateway-cloud-b-region',
  },
  {
    name: 'bedrock region with userinfo, host and port (config)',
    headers: config(() => ({ provider: 'bedrock', api_key: 'k', cloud_b_region: `x@127.0.0.1:${P()}/#` })),
    body: BEDROCK_CHAT,
    status: 400,
    code: 'invalid_config',
  },
  {
    name: 'bedrock {region} placeholder filled with a decimal IP',
    headers: () => ({ ...openai(`http://{region}:${P()}/`)(), 'x-gateway-provider': 'bedrock', 'x-gateway-cloud-b-region': '2130706433' }),
    body: BEDROCK_CHAT,
    status: 400,
    code: 'invalid_header',
    param: 'x-gateway-cloud-b-region',
  },
  {
    name: 'bedrock {region} placeholder resolving to loopback',
    headers: () => ({ ...openai(`http://{region}.canary.test:${P()}/`)(), 'x-gateway-provider': 'bedrock', 'x-gateway-cloud-b-region': 'us-east-1' }),
    body: BEDROCK_CHAT,
    status: 400,
    code: 'custom_host_not_allowed',
  },
  {
    name: 'bedrock built-in host resolving to loopback',
    headers: () => ({ 'x-gateway-provider': 'bedrock', authorization: 'Bearer k', 'x-gateway-cloud-b-region': 'us-east-1' }),
    body: BEDROCK_CHAT,
    status: 400,
    code: 'custom_host_not_allowed',
  },
  {
    name: 'vertex {region} placeholder filled with a decimal IP',
    headers: () => ({ ...openai(`http://{region}:${P()}/`)(), 'x-gateway-provider': 'vertex-ai', 'x-gateway-cloud-c-region': '2130706433', 'x-gateway-cloud-c-project-id': 'p' }),
    status: 400,
    code: 'invalid_header',
    param: 'x-gateway-cloud-c-region',
  },
  {
    name: 'vertex region with a host in it (config)',
    headers: config(() => ({ provider: 'vertex-ai', api_key: 'k', cloud_c_project_id: 'p', cloud_c_region: `127.0.0.1:${P()}/#` })),
    status: 400,
    code: 'invalid_config',
  },
  {
    name: 'vertex built-in host resolving to loopback',
    headers: () => ({ 'x-gateway-provider': 'vertex-ai', authorization: 'Bearer ya29.x', 'x-gateway-cloud-c-region': 'us-central1', 'x-gateway-cloud-c-project-id': 'p' }),
    status: 400,
    code: 'custom_host_not_allowed',
  },
  {
    name: 'azure-openai resource name with a host in it',
    headers: () => ({ 'x-gateway-provider': 'azure-openai', authorization: 'Bearer k', 'x-gateway-cloud-a-resource-name': `127.0.0.1:${P()}/#`, 'x-gateway-cloud-a-deployment-id': 'd' }),
    status: 400,
    code: 'invalid_header',
    param: 'x-gateway-cloud-a-resource-name',
  },
  {
    name: 'azure-openai resource host resolving to loopback',
    headers: () => ({ 'x-gateway-provider': 'azure-openai', authorization: 'Bearer k', 'x-gateway-cloud-a-resource-name': 'myres', 'x-gateway-cloud-a-deployment-id': 'd' }),
    status: 400,
    code: 'custom_host_not_allowed',
  },
  {
    name: 'azure-ai endpoint name that is an IP',
    headers: config(() => ({ provider: 'azure-ai', api_key: 'k', cloud_a_deployment_type: 'managed', cloud_a_endpoint_name: '127.0.0.1' })),
    status: 400,
    code: 'invalid_config',
  },
  {
    name: 'azure-ai endpoint name that is some other host',
    headers: config(() => ({ provider: 'azure-ai', api_key: 'k', cloud_a_deployment_type: 'managed', cloud_a_endpoint_name: 'canary.test' })),
    status: 400,
    code: 'invalid_config',
  },
  {
    name: 'azure-ai endpoint host resolving to loopback',
    headers: config(() => ({ provider: 'azure-ai', api_key: 'k', cloud_a_deployment_type: 'managed', cloud_a_endpoint_name: 'ep.eastus.inference.ml.azure.com' })),
    status: 400,
    code: 'custom_host_not_allowed',
  },
  {
    name: 'azure-ai serverless host (name + region) resolving to loopback',
    headers: config(() => ({ provider: 'azure-ai', api_key: 'k', cloud_a_deployment_type: 'serverless', cloud_a_endpoint_name: 'ep', cloud_a_region: 'eastus2' })),
    status: 400,
    code: 'custom_host_not_allowed',
  },
  {
    name: 'azure-ai region with a host in it',
    headers: config(() => ({ provider: 'azure-ai', api_key: 'k', cloud_a_deployment_type: 'serverless', cloud_a_endpoint_name: 'ep', cloud_a_region: 'x.canary.test' })),
    status: 400,
    code: 'invalid_config',
  },
  {
    name: 'openai built-in host resolving to loopback',
    headers: () => ({ 'x-gateway-provider': 'openai', authorization: 'Bearer sk-x' }),
    status: 400,
    code: 'custom_host_not_allowed',
  },
];

describe('SSRF: every outbound-URL builder refuses loopback, private and link-local destinations', () => {
  it.each([...CUSTOM_HOST_ROWS, ...BUILDER_ROWS])('$name → $status $code, no connection', async (row) => {
    const before = canaryConnections();
    const a = await post(`${gw.url}/v1/chat/completions`, gw.headers(row.headers()), row.body ?? CHAT);
    expect(a.status, a.text).toBe(row.status);
    expect(a.json?.error?.code, a.text).toBe(row.code);
    if (row.param) expect(a.json?.error?.param).toBe(row.param);
    // The answer names no socket error code (no port-scanner oracle).
    expect(a.text).not.toMatch(/ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH/);
    expect(canaryConnections()).toBe(before);
  });
});

describe('SSRF: token_uri and redirects', () => {
  const vertex = (tokenUri: string) =>
    config(() => ({
      provider: 'vertex-ai',
      cloud_c_region: 'us-central1',
      cloud_c_project_id: 'p',
      cloud_c_service_account_json: { type: 'service_account', client_email: 'sa@p.iam.gserviceaccount.com', private_key: privatePem, token_uri: tokenUri },
    }));

  it.each([
    ['a loopback token_uri', () => `http://127.0.0.1:${P()}/token`],
    ['a decimal-IP token_uri', () => `http://2130706433:${P()}/token`],
    ['a token_uri resolving to loopback', () => `http://canary.test:${P()}/token`],
    ['the default token host resolving to loopback', () => 'https://oauth2.googleapis.com/token'],
  ])('%s is refused before any byte is sent', async (_name, uri) => {
    const before = canaryConnections();
    const a = await post(`${gw.url}/v1/chat/completions`, gw.headers(vertex(uri())()), CHAT);
    expect(a.status, a.text).toBe(400);
    expect(a.json.error.code).toBe('custom_host_not_allowed');
    expect(a.json.error.param).toBe('cloud_c_service_account_json.token_uri');
    expect(canaryConnections()).toBe(before);
  });

  it('a token endpoint that redirects to loopback: the redirect is not followed', async () => {
    const before = canaryConnections();
    const a = await post(`${gw.url}/v1/chat/completions`, gw.headers(vertex(`http://127.0.0.2:${redirectorPort}/token`)()), CHAT);
    expect(a.status, a.text).toBe(502);
    expect(a.json.error.code).toBe('upstream_invalid_response');
    expect(a.json.error.message).toContain('redirects are not followed');
    expect(redirects).toBe(1);
    expect(canaryConnections()).toBe(before);
  });

  it('a token endpoint that redirects to itself is asked once', async () => {
    const a = await post(`${gw.url}/v1/chat/completions`, gw.headers(vertex(`http://127.0.0.2:${redirectorPort}/to-self`)()), CHAT);
    expect(a.status, a.text).toBe(502);
    expect(redirects).toBe(1);
  });

  it('a trusted custom_host answering a redirect to loopback: not followed', async () => {
    const before = canaryConnections();
    const a = await post(`${gw.url}/v1/chat/completions`, gw.headers(openai(`http://127.0.0.2:${redirectorPort}/v1`)()), CHAT);
    expect(a.status, a.text).toBeGreaterThanOrEqual(400);
    expect(redirects).toBe(1);
    expect(canaryConnections()).toBe(before);
  });
});

describe('SSRF: the checks\' JWKS, webhook and log URLs', () => {
  let egress: Egress;
  beforeAll(() => {
    egress = createEgress(new HostGuard({ trusted: ['127.0.0.2'], resolve: resolveHost }));
  });
  afterAll(() => egress.close());

  const urls: [string, () => string][] = [
    ['loopback', () => `http://127.0.0.1:${P()}/x`],
    ['decimal IP', () => `http://2130706433:${P()}/x`],
    ['IPv4-mapped', () => `http://[::ffff:127.0.0.1]:${P()}/x`],
    ['name resolving to loopback', () => `http://canary.test:${P()}/x`],
    ['redirect to loopback', () => `http://127.0.0.2:${redirectorPort}/x`],
  ];
  const checks: [string, (url: string) => Record<string, unknown>][] = [
    ['webhook', (u) => ({ webhookURL: u })],
    ['log', (u) => ({ logURL: u })],
    ['jwt', (u) => ({ jwksUri: u, headerKey: 'authorization' })],
  ];
  const rows = checks.flatMap(([check, params]) => urls.map(([name, url]) => [`${check} to ${name}`, check, params, url] as const));

  it.each(rows)('%s: refused, no connection', async (_name, check, params, url) => {
    const before = canaryConnections();
    const http = createCheckHttp(new HostGuard({ trusted: ['127.0.0.2'], resolve: resolveHost }), egress.dispatcher);
    const input = chatRequest('hi', { headers: { authorization: 'Bearer a.b.c' } } as never);
    const outcome = await run(check, params(url()), input, deps({ http })).then(
      (o) => o,
      (e: unknown) => e,
    );
    // A check that could not reach its URL fails (an error or a failing verdict), never passes.
    if (!(outcome instanceof Error)) expect((outcome as { verdict: boolean }).verdict).toBe(false);
    expect(canaryConnections()).toBe(before);
  });
});

describe('SSRF: operator settings', () => {
  it('a provider base URL on loopback, untrusted, stops the start naming GATEWAY_TRUSTED_HOSTS', async () => {
    await expect(
      startGateway({ options: { 'trusted-hosts': '', 'provider-base-urls': `openai=http://127.0.0.1:${P()}/v1` }, resolveHost }),
    ).rejects.toThrow(/provider_base_urls\.openai 127\.0\.0\.1 is a loopback address.*GATEWAY_TRUSTED_HOSTS/);
  });

  it('an alert webhook on loopback, untrusted, stops the start', async () => {
    await expect(
      startGateway({ options: { 'trusted-hosts': '', 'usage-limit-alert-webhook': `http://2130706433:${P()}/hook` }, resolveHost }),
    ).rejects.toThrow(/loopback address/);
  });
});

describe('SSRF: no port-scanner oracle', () => {
  it('a closed port and an open non-HTTP port on a trusted host answer alike', async () => {
    const open = net.createServer((s) => s.destroy());
    await new Promise<void>((resolve) => open.listen(0, '127.0.0.2', resolve));
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.2', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    try {
      const ask = (port: number) => post(`${gw.url}/v1/chat/completions`, gw.headers(openai(`http://127.0.0.2:${port}/v1`)()), CHAT);
      const [a, b] = [await ask((open.address() as AddressInfo).port), await ask(closedPort)];
      expect(a.status).toBe(502);
      expect(b.status).toBe(502);
      expect(a.json.error.code).toBe(b.json.error.code);
      expect(a.json.error.message).toBe(b.json.error.message);
    } finally {
      await new Promise<void>((resolve) => open.close(() => resolve()));
    }
  });
});

it('the injected resolver was used (no name reached the system resolver)', () => {
  expect(lookups).toContain('canary.test');
  expect(lookups).toContain('api.openai.com');
});
