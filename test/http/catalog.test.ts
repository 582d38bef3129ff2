/**
 * The catalog (gateway keys, virtual keys, saved configs) can change while the gateway serves, and
 * the next request sees the change: no stale plan, no stale key. And hot routes take path parameters.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { parseConfig } from '../../src/config/schema.js';
import { authenticate } from '../../src/http/deps.js';
import { sendError } from '../../src/http/errors.js';
import type { HotRoute } from '../../src/http/router.js';
import { generateApiKey } from '../../src/security/api-keys.js';
import type { MemoryApiKeyStore } from '../../src/state/memory/api-key-store.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { EXCHANGE_TIMEOUT_MS, post, type Answer } from '../helpers/http.js';

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

let fake: FakeOpenAI;
let gw: TestGateway;

/** A hot route of the test's own: it authenticates, then echoes its path parameters. */
const routes: HotRoute[] = [
  {
    method: 'GET',
    path: '/v1/things/:id',
    handle(ex, params) {
      try {
        authenticate(ex, gw.gateway.catalog.apiKeys);
      } catch (e) {
        sendError(ex, e);
        return;
      }
      ex.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ params, key: ex.gatewayKey?.name }));
    },
  },
  { method: 'DELETE', path: '/v1/things/:id', handle: (ex) => ex.res.writeHead(204).end() },
];

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  gw = await startGateway({
    bootstrap: {
      api_keys: [],
      provider_base_urls: {},
      virtual_keys: { 'vk-a': { provider: 'openai', custom_host: fake.baseUrl, api_key: 'sk-fake-provider-1' } },
    },
    savedConfigs: new Map([
      ['saved', parseConfig({ virtual_key: 'vk-a', override_params: { model: 'model-1' } })],
      ['saved-made', parseConfig({ virtual_key: 'vk-made' })],
    ]),
    routes,
  });
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

beforeEach(() => fake.reset());

async function chat(headers: Record<string, string>): Promise<{ answer: Answer; auth: unknown; model: unknown }> {
  const answer = await post(`${gw.url}/v1/chat/completions`, gw.headers(headers), CHAT);
  expect(answer.status).toBe(200);
  const seen = fake.requests.at(-1)!;
  return { answer, auth: seen.headers.authorization, model: seen.body.model };
}

async function send(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const res = await request(`${gw.url}${path}`, { method: method as 'GET', headers, headersTimeout: EXCHANGE_TIMEOUT_MS, bodyTimeout: EXCHANGE_TIMEOUT_MS });
  const text = await res.body.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json, cacheStatus: undefined, ms: 0 };
}

describe('catalog writes while serving', () => {
  it('a rotated virtual key is used by the next request, by header and through a saved config', async () => {
    const { virtualKeys } = gw.gateway.catalog;
    const made = (api_key: string, version_id: string) => ({
      id: 'vk-made',
      key: { provider: 'openai', custom_host: fake.baseUrl, api_key },
      made: { created_at: '2025-05-01T00:00:00.000Z', last_updated_at: new Date().toISOString(), version_id },
    });
    expect(await virtualKeys.create(made('sk-fake-provider-1', 'v1'))).toBe(true);
    expect((await chat({ 'x-gateway-virtual-key': 'vk-made' })).auth).toBe('Bearer sk-fake-provider-1');
    expect((await chat({ 'x-gateway-config': 'saved-made' })).auth).toBe('Bearer sk-fake-provider-1');
    expect(await virtualKeys.replace(made('sk-fake-provider-2', 'v2'))).toBe(true);
    expect((await chat({ 'x-gateway-virtual-key': 'vk-made' })).auth).toBe('Bearer sk-fake-provider-2');
    expect((await chat({ 'x-gateway-config': 'saved-made' })).auth).toBe('Bearer sk-fake-provider-2');
    // the bootstrap file's key is the operator's: the store does not replace it
    expect(await virtualKeys.replace({ ...made('sk-x', 'v3'), id: 'vk-a' })).toBe(false);
    expect((await chat({ 'x-gateway-virtual-key': 'vk-a' })).auth).toBe('Bearer sk-fake-provider-1');
  });

  it('an edited saved config is used by the next request', async () => {
    const { savedConfigs } = gw.gateway.catalog;
    expect((await chat({ 'x-gateway-config': 'saved' })).model).toBe('model-1');
    await savedConfigs.put('saved', parseConfig({ virtual_key: 'vk-a', override_params: { model: 'model-2' } }));
    expect((await chat({ 'x-gateway-config': 'saved' })).model).toBe('model-2');
    await savedConfigs.delete('saved');
    const gone = await post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': 'saved' }), CHAT);
    expect(gone.status).toBe(404);
    expect(gone.json.error.code).toBe('config_not_found');
  });

  it('a gateway key added while serving is accepted, and refused once revoked', async () => {
    const keys = gw.gateway.catalog.apiKeys as MemoryApiKeyStore;
    const k = generateApiKey();
    const headers = { 'x-gateway-api-key': k, 'content-type': 'application/json', 'x-gateway-virtual-key': 'vk-a' };
    expect((await post(`${gw.url}/v1/chat/completions`, headers, CHAT)).json.error.code).toBe('invalid_gateway_key');
    await keys.add(k, { id: 'key-1', name: 'added-live', created_at: new Date().toISOString() });
    expect((await post(`${gw.url}/v1/chat/completions`, headers, CHAT)).status).toBe(200);
    await keys.revoke('key-1');
    expect((await post(`${gw.url}/v1/chat/completions`, headers, CHAT)).json.error.code).toBe('invalid_gateway_key');
  });
});

describe('hot routes with path parameters', () => {
  it('hands the route its parameters, percent-decoded', async () => {
    const r = await send('GET', '/v1/things/thing%201?x=1', gw.headers());
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ params: { id: 'thing 1' }, key: 'env-0' });
  });

  it('answers 405 with Allow for a known pattern asked with another method, after the key check', async () => {
    const r = await send('POST', '/v1/things/abc', gw.headers());
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET, DELETE');
    expect(r.json.error.code).toBe('method_not_allowed');
    expect((await send('POST', '/v1/things/abc', {})).json.error.code).toBe('missing_gateway_key');
  });

  it('leaves a path no pattern matches to the 404', async () => {
    const r = await send('GET', '/v1/things/a/b', gw.headers());
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('route_not_found');
  });

  it('still serves the proxied routes and their 405', async () => {
    const r = await send('GET', '/v1/chat/completions', gw.headers());
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('POST');
  });
});
