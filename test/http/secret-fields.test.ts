/**
 * Every secret field of every provider descriptor (and every secret field the config accepts) stays
 * out of everything the gateway prints: `sluice plan`'s tree, the request log line, and the error a
 * client gets when the provider echoes the credential back.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldMeta, PROVIDER_FIELDS, SECRET_FIELDS, type ProviderFieldName } from '../../src/config/provider-fields.js';
import { redact } from '../../src/security/redact.js';
import { parseConfig } from '../../src/config/schema.js';
import { buildPlan } from '../../src/plan/build-plan.js';
import { defaultProviders, ProviderRegistry } from '../../src/providers/registry.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { logLine, traceId } from './_util.js';
import { MemoryVersionedStore } from '../../src/state/memory/versioned-store.js';
import type { VirtualKey } from '../../src/config/bootstrap.js';

const MARK = 'SECRET-MARK';
const providers = defaultProviders();

/** Every secret field of every descriptor, and every secret field a config or virtual key accepts. */
const SECRETS = [...new Set([...providers.flatMap((p) => p.descriptor.fields.secrets), ...SECRET_FIELDS])].sort() as ProviderFieldName[];

/** A value for the field: a string, or (for an object field) a service-account-like object. */
function secretValue(field: ProviderFieldName): unknown {
  const s = `${MARK}-${field}-0123456789`;
  if (PROVIDER_FIELDS[field].safeParse(s).success) return s;
  return { type: 'service_account', private_key: `-----BEGIN PRIVATE KEY-----\n${s}\n-----END PRIVATE KEY-----\n`, private_key_id: `kid-${s}` };
}

/** The strings a provider might echo back: each string inside the value. */
const echoed = (v: unknown): string[] => (typeof v === 'string' ? [v] : Object.values(v as Record<string, string>));

it('knows the credentials: the key, the cloud B key pair and session token, the cloud C service account', () => {
  expect(SECRETS).toEqual(
    expect.arrayContaining(['api_key', 'cloud_b_access_key_id', 'cloud_b_secret_access_key', 'cloud_b_session_token', 'cloud_c_service_account_json']),
  );
  for (const p of providers) expect(p.descriptor.fields.secrets).toContain('api_key');
});

describe('sluice plan redaction', () => {
  const deps = {
    virtualKeys: new MemoryVersionedStore<VirtualKey>(),
    registry: new ProviderRegistry(providers),
    hostGuard: HostGuard.fromEnv(undefined),
  };

  for (const p of providers) {
    const own = SECRETS.filter((f) => p.descriptor.fields.names.has(f));
    it.each(own)(`${p.descriptor.id}: %s is printed as [redacted]`, (field) => {
      const config = parseConfig({ provider: p.descriptor.id, custom_host: 'https://llm.example.com/v1', [field]: secretValue(field) });
      const tree = buildPlan(config, deps);
      const printed = JSON.stringify(redact(tree), null, 2);
      expect(printed).not.toContain(MARK);
      const target = JSON.parse(printed).target;
      expect(target[field] ?? target.extra[field]).toBe('[redacted]');
    });
    const foreign = SECRETS.filter((f) => !p.descriptor.fields.names.has(f));
    if (foreign.length > 0) {
      it.each(foreign)(`${p.descriptor.id}: %s, which it does not use, is refused without echoing it`, (field) => {
        const config = parseConfig({ provider: p.descriptor.id, custom_host: 'https://llm.example.com/v1', [field]: secretValue(field) });
        let err: (Error & { param?: string; issues?: unknown }) | undefined;
        try {
          buildPlan(config, deps);
        } catch (e) {
          err = e as Error;
        }
        expect(err?.param).toBe(`config.${field}`);
        expect(JSON.stringify({ m: err?.message, i: err?.issues })).not.toContain(MARK);
      });
    }
  }

  it('the CLI prints none of them, all set at once', () => {
    const openai = providers.find((p) => p.descriptor.id === 'openai')!.descriptor.fields;
    const config = Object.fromEntries([['provider', 'openai'], ...SECRETS.filter((f) => openai.names.has(f)).map((f) => [f, secretValue(f)])]);
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'plan', JSON.stringify(config)], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('[redacted]');
    expect(r.stdout).not.toContain(MARK);
    // Every secret at once: refused (openai uses few of them), and the refusal prints none.
    const all = Object.fromEntries([['provider', 'openai'], ...SECRETS.map((f) => [f, secretValue(f)])]);
    const refused = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'plan', JSON.stringify(all)], { encoding: 'utf8', timeout: 30_000 });
    expect(refused.status).not.toBe(0);
    expect(refused.stdout + refused.stderr).not.toContain(MARK);
  });
});

describe('log lines and error messages', () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

  async function failWithEcho(field: ProviderFieldName, headers: Record<string, string>, value: unknown): Promise<void> {
    // A provider that quotes the credentials it was given (or was configured with) in its error.
    fake.setDefault('/v1/chat/completions', openAIError(401, `Invalid credentials: ${echoed(value).join(' / ')}`, 'invalid_request_error', 'invalid_api_key'));
    const trace = traceId(field);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gw.headers({ 'x-gateway-trace-id': trace, ...headers }),
      body: JSON.stringify(CHAT),
    });
    const text = await res.text();
    expect(res.status).toBe(401);
    expect(text).toContain('Invalid credentials: [redacted]');
    expect(text).not.toContain(MARK);
    const line = await logLine(gw, trace);
    expect(line.error.message).toContain('[redacted]');
    expect(JSON.stringify(line)).not.toContain(MARK);
    expect(gw.logText()).not.toContain(MARK);
  }

  /** A 400 naming the field (or its header), with neither the answer nor the log holding the value. */
  async function refusedWithoutEcho(param: string, headers: Record<string, string>): Promise<void> {
    const trace = traceId(param);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gw.headers({ 'x-gateway-trace-id': trace, ...headers }),
      body: JSON.stringify(CHAT),
    });
    const text = await res.text();
    expect(res.status).toBe(400);
    expect(JSON.parse(text).error.param).toBe(param);
    expect(text).not.toContain(MARK);
    const line = await logLine(gw, trace);
    expect(JSON.stringify(line)).not.toContain(MARK);
    expect(gw.logText()).not.toContain(MARK);
  }

  // The fake speaks OpenAI: the echo path runs for the fields openai uses; the others are refused.
  const openaiFields = providers.find((p) => p.descriptor.id === 'openai')!.descriptor.fields.names;

  it.each(SECRETS)('%s set in x-gateway-config', async (field) => {
    const value = secretValue(field);
    const config = { provider: 'openai', custom_host: fake.baseUrl, api_key: field === 'api_key' ? value : 'sk-plain-key', [field]: value };
    if (openaiFields.has(field)) await failWithEcho(field, { 'x-gateway-config': JSON.stringify(config) }, value);
    else await refusedWithoutEcho(`config.${field}`, { 'x-gateway-config': JSON.stringify(config) });
  });

  const withHeader = SECRETS.flatMap((f) => {
    const h = fieldMeta.get(PROVIDER_FIELDS[f])?.header;
    return h === undefined ? [] : [[f, h] as const];
  });

  it('at least the cloud B credentials have headers', () => {
    expect(withHeader.map(([f]) => f)).toEqual(expect.arrayContaining(['cloud_b_secret_access_key', 'cloud_b_session_token']));
  });

  it.each(withHeader)('%s set by its header %s', async (field, header) => {
    const value = secretValue(field) as string;
    const headers = {
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': fake.baseUrl,
      authorization: 'Bearer sk-plain-key',
      [header]: value,
    };
    if (openaiFields.has(field)) await failWithEcho(field, headers, value);
    else await refusedWithoutEcho(header, headers);
  });

  it('Authorization (the api_key) is redacted too', async () => {
    const value = secretValue('api_key') as string;
    await failWithEcho('api_key', { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, authorization: `Bearer ${value}` }, value);
  });
});
