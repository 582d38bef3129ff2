/**
 * Redaction by kind, end to end: a recognisable secret (a canary, unique per input) is fed through
 * every input that can hold one (virtual key secrets and custom_host userinfo, from the bootstrap
 * file and the API; a config's provider key and custom_host; check headers and webhook / log URLs,
 * inline and stored; the bootstrap file's provider base URLs; the alert webhook option), and every
 * output is scanned for each: the management APIs' answers, `sluice plan`'s output, error bodies,
 * the log stream, /v1/logs and /metrics.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED, redact, redactUrls } from '../../src/security/redact.js';
import { MasterKey } from '../../src/security/master-key.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { callApi, post } from '../helpers/http.js';

/** A canary per input: where one turns up, its name says where it came from. */
const tag = randomBytes(4).toString('hex');
const CANARY_NAMES = [
  'bootVkKey',
  'bootVkHost',
  'bootBaseUrl',
  'apiVkKey',
  'apiVkHost',
  'apiVkKey2',
  'cfgKey',
  'cfgHost',
  'cfgWebhookUrl',
  'cfgWebhookHeader',
  'cfgLogHeader',
  'grWebhookUrl',
  'grWebhookHeader',
  'grLogHeader',
  'alertUrl',
  'planKey',
  'planHost',
  'planHeader',
  'planJwksUrl',
] as const;
const C = Object.fromEntries(CANARY_NAMES.map((n) => [n, `CANARY${n}${tag}`])) as Record<(typeof CANARY_NAMES)[number], string>;

/** `url` with `user:pass@` put in. */
const withUserinfo = (url: string, pass: string, user = 'user'): string => {
  const u = new URL(url);
  u.username = user;
  u.password = pass;
  return u.toString();
};

/** Every canary found in `text`, by name. */
const leaked = (text: string): string[] => CANARY_NAMES.filter((n) => text.includes(C[n]));

const MASTER = MasterKey.generate();
const ADMIN = `sk-test-redaction-admin-${tag}`;

describe('redact (the function)', () => {
  it('URL userinfo, in any string, whatever the scheme; nothing else', () => {
    expect(redactUrls('https://u:PASS@host.example/v1')).toBe(`https://${REDACTED}@host.example/v1`);
    expect(redactUrls('see http://only-user@h:8080/x and wss://a:b@c/d?e=f@g')).toBe(`see http://${REDACTED}@h:8080/x and wss://${REDACTED}@c/d?e=f@g`);
    expect(redactUrls('p@ss in https://u:p@ss@host/')).toBe(`p@ss in https://${REDACTED}@host/`);
    expect(redactUrls('mail me: a@b.example; https://host/a@b')).toBe('mail me: a@b.example; https://host/a@b');
  });

  it('fields marked secret whole, check header maps value by value (names kept), in any nesting; the input is not changed', () => {
    const tree = {
      target: { api_key: 'k', extra: { cloud_b_secret_access_key: 's', cloud_c_service_account_json: { private_key: 'pk' } }, custom_host: 'https://u:p@h/' },
      hooks: [{ 'default.webhook': { webhookURL: 'https://u:p@h/hook', headers: { authorization: 'Bearer x', 'x-a': 'y' } } }],
      nothing: null,
      list: ['https://u:p@h/'],
    };
    const copy = structuredClone(tree);
    expect(redact(tree)).toEqual({
      target: { api_key: REDACTED, extra: { cloud_b_secret_access_key: REDACTED, cloud_c_service_account_json: REDACTED }, custom_host: `https://${REDACTED}@h/` },
      hooks: [{ 'default.webhook': { webhookURL: `https://${REDACTED}@h/hook`, headers: { authorization: REDACTED, 'x-a': REDACTED } } }],
      nothing: null,
      list: [`https://${REDACTED}@h/`],
    });
    expect(tree).toEqual(copy);
  });
});

describe('every secret input stays out of every output', () => {
  let fake: FakeOpenAI;
  let hooks: Server;
  let hookBase: string;
  let gw: TestGateway;
  /** Every answer, error and printout gathered here, and scanned at the end (and by each test). */
  const outputs: { where: string; text: string }[] = [];
  const seen = (where: string, text: string): string => {
    outputs.push({ where, text });
    expect(leaked(text), where).toEqual([]);
    return text;
  };

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    hooks = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(req.url === '/fail' ? 500 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ verdict: true }));
      });
    });
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
    hookBase = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
    const bootstrapYaml = `
api_keys:
  - { key: ${ADMIN}, name: admin, workspace_id: ws-red, organisation_id: org-red }
virtual_keys:
  vk-boot:
    provider: openai
    api_key: ${C.bootVkKey}
    custom_host: ${withUserinfo(fake.baseUrl, C.bootVkHost)}
provider_base_urls:
  groq: ${withUserinfo(fake.baseUrl, C.bootBaseUrl)}
`;
    gw = await startGateway({
      bootstrapYaml,
      masterKey: MASTER.text,
      options: { 'usage-limit-alert-webhook': withUserinfo(`${hookBase}/alert`, C.alertUrl), 'log-level': 'debug' },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await new Promise((r) => hooks?.close(r));
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await callApi(gw.url, method, path, ADMIN, body);
    seen(`${method} ${path} → ${r.status}`, r.text);
    return r;
  };
  const chat = async (headers: Record<string, string>, label: string) => {
    const r = await post(`${gw.url}/v1/chat/completions`, { 'x-gateway-api-key': ADMIN, 'content-type': 'application/json', ...headers }, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    seen(`chat ${label} → ${r.status}`, JSON.stringify(r.json ?? null));
    return r;
  };

  it('virtual keys API: secrets are never answered, custom_host userinfo is redacted (create, get, list, rotate)', async () => {
    const body = { id: `vk-red-${tag}`, provider: 'openai', api_key: C.apiVkKey, custom_host: withUserinfo(fake.baseUrl, C.apiVkHost), workspace_id: 'ws-red' };
    const made = await api('POST', '/v1/virtual-keys', body);
    expect(made.status).toBe(201);
    expect(made.json.secrets_set).toEqual(['api_key']);
    expect(made.json.custom_host).toBe(withUserinfo(fake.baseUrl, 'x').replace('user:x@', `${REDACTED}@`));
    expect((await api('GET', `/v1/virtual-keys/${body.id}`)).status).toBe(200);
    expect((await api('GET', '/v1/virtual-keys')).status).toBe(200);
    expect((await api('PUT', `/v1/virtual-keys/${body.id}`, { ...body, id: undefined, api_key: C.apiVkKey2 })).status).toBe(200);
    // the key still works with its real secret and host
    expect((await chat({ 'x-gateway-virtual-key': body.id }, 'API virtual key')).status).toBe(200);
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${C.apiVkKey2}`);
    expect((await chat({ 'x-gateway-virtual-key': 'vk-boot' }, 'bootstrap virtual key')).status).toBe(200);
  });

  it('guardrails API: check header values and URL userinfo are redacted, header names kept; the placeholder cannot be stored back', async () => {
    const checks = [
      { id: 'default.webhook', parameters: { webhookURL: withUserinfo(`${hookBase}/hook`, C.grWebhookUrl), headers: { authorization: `Bearer ${C.grWebhookHeader}` } } },
      { id: 'default.log', parameters: { logURL: `${hookBase}/log`, headers: { 'x-api-key': C.grLogHeader } } },
    ];
    const body = { name: 'Remote', checks, actions: { onFail: 'block' }, workspace_id: 'ws-red' };
    const made = await api('POST', '/v1/guardrails', body);
    expect(made.status).toBe(201);
    const got = await api('GET', `/v1/guardrails/${made.json.id}`);
    expect(got.status).toBe(200);
    expect(got.json.checks[0].parameters.headers).toEqual({ authorization: REDACTED });
    expect(got.json.checks[0].parameters.webhookURL).toBe(`http://${REDACTED}@${new URL(hookBase).host}/hook`);
    expect(got.json.checks[1].parameters.headers).toEqual({ 'x-api-key': REDACTED });
    expect((await api('GET', '/v1/guardrails')).status).toBe(200);
    expect((await api('PUT', `/v1/guardrails/${made.json.id}`, body)).status).toBe(200);
    // what a GET answered, sent back as it is, is refused naming the placeholder's field
    const back = await api('PUT', `/v1/guardrails/${made.json.id}`, { ...body, checks: got.json.checks });
    expect(back.status).toBe(400);
    expect(back.json.issues).toEqual([expect.objectContaining({ path: ['checks', 0, 'parameters', 'headers', 'authorization'], message: expect.stringContaining('placeholder') })]);
    // the stored guardrail still calls its receivers with the real values
    expect((await chat({ 'x-gateway-config': JSON.stringify({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'sk-plain', input_guardrails: [made.json.id] }) }, 'stored guardrail')).status).toBe(200);
  });

  it('requests: a config with secrets, userinfo and check headers, answered or refused, leaks nothing (errors included)', async () => {
    const config = (over: Record<string, unknown> = {}) => ({
      provider: 'openai',
      api_key: C.cfgKey,
      custom_host: withUserinfo(fake.baseUrl, C.cfgHost),
      input_guardrails: [
        {
          'default.webhook': { webhookURL: withUserinfo(`${hookBase}/hook`, C.cfgWebhookUrl), headers: { authorization: C.cfgWebhookHeader } },
          'default.log': { logURL: `${hookBase}/log`, headers: { 'x-key': C.cfgLogHeader } },
        },
      ],
      ...over,
    });
    await chat({ 'x-gateway-config': JSON.stringify(config()) }, 'config');
    // a receiver that fails, an unreachable host, a host the guard refuses, a bad field next to the secrets
    const failing = config({ input_guardrails: [{ 'default.webhook': { webhookURL: withUserinfo(`${hookBase}/fail`, C.cfgWebhookUrl), headers: { a: C.cfgWebhookHeader } }, deny: true }] });
    await chat({ 'x-gateway-config': JSON.stringify(failing) }, 'failing webhook');
    await chat({ 'x-gateway-config': JSON.stringify(config({ custom_host: withUserinfo('http://127.0.0.1:1/v1', C.cfgHost) })) }, 'unreachable');
    await chat({ 'x-gateway-config': JSON.stringify(config({ custom_host: withUserinfo('http://10.255.255.1/v1', C.cfgHost) })) }, 'refused host');
    await chat({ 'x-gateway-config': JSON.stringify(config({ retry: { attempts: 'x' } })) }, 'invalid config');
    await chat({ 'x-gateway-config': JSON.stringify(config({ cloud_b_secret_access_key: C.cfgKey })) }, 'unused secret field');
    await chat({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': withUserinfo('http://127.0.0.1:1/v1', C.cfgHost), authorization: `Bearer ${C.cfgKey}` }, 'headers');
    await chat({ 'x-gateway-provider': 'groq', authorization: `Bearer ${C.cfgKey}` }, 'bootstrap base URL');
    // an error whose message quotes what it was given
    const named = await chat({ 'x-gateway-provider': withUserinfo('https://llm.example.com/v1', C.cfgHost), authorization: 'Bearer sk-plain' }, 'a URL as the provider');
    expect(named.status).toBe(400);
    expect(named.json.error.message).toContain(`${REDACTED}@llm.example.com`);
  });

  it('sluice plan: the tree and its errors print no secret, with a bootstrap file and virtual keys', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-redaction-'));
    const bootstrap = join(dir, 'bootstrap.yaml');
    writeFileSync(bootstrap, `virtual_keys:\n  vk-plan:\n    provider: openai\n    api_key: ${C.bootVkKey}\n    custom_host: ${withUserinfo('https://llm.example.com/v1', C.bootVkHost)}\n`);
    const config = {
      strategy: { mode: 'fallback' },
      input_guardrails: [
        {
          'default.webhook': { webhookURL: withUserinfo('https://hooks.example.com/check', C.planHost), headers: { authorization: `Bearer ${C.planHeader}` } },
          'default.jwt': { jwksUri: withUserinfo('https://idp.example.com/jwks', C.planJwksUrl), headerKey: 'x-user-token' },
        },
      ],
      targets: [{ provider: 'openai', api_key: C.planKey, custom_host: withUserinfo('https://llm.example.com/v1', C.planHost) }, { virtual_key: 'vk-plan' }],
    };
    const run = (cfg: unknown) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'plan', JSON.stringify(cfg), '--bootstrap', bootstrap], { encoding: 'utf8', timeout: 55_000 });
    const ok = run(config);
    seen('sluice plan (stdout)', ok.stdout);
    seen('sluice plan (stderr)', ok.stderr);
    expect(ok.status, ok.stderr).toBe(0);
    const tree = JSON.parse(ok.stdout);
    expect(tree.children[0].target.api_key).toBe(REDACTED);
    expect(tree.children[0].target.custom_host ?? tree.children[0].settings.custom_host).toContain(`${REDACTED}@llm.example.com`);
    expect(JSON.stringify(tree.settings.input_guardrails)).toContain(`"authorization":"${REDACTED}"`);
    const bad = run({ ...config, retry: { attempts: 'x' } });
    expect(bad.status).not.toBe(0);
    seen('sluice plan, refused (stdout + stderr)', bad.stdout + bad.stderr);
  }, 120_000); // two CLI processes, each compiling the sources at start

  it('nothing in /v1/logs, /metrics or the log stream (last: after every input above went through)', async () => {
    seen('GET /v1/logs', (await callApi(gw.url, 'GET', '/v1/logs', ADMIN)).text);
    seen('GET /metrics', await (await fetch(`${gw.url}/metrics`)).text());
    expect(gw.logText().length).toBeGreaterThan(0);
    seen('log stream', gw.logText());
    const all = outputs.flatMap((o) => leaked(o.text).map((n) => `${n} in ${o.where}`));
    expect(all).toEqual([]);
  });
});
