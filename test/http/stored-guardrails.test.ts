/**
 * Configs that name stored guardrails: a string entry uses the latest version, an
 * object with `version_id` pins one, an edited guardrail is used by the next request (the plan cache
 * follows the store's version), and an unknown id is a 400 naming the path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';
import { request } from 'undici';

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

const chat = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
const target = () => ({ provider: 'openai', custom_host: fake.baseUrl, api_key: 'sk-provider-stored' });
const send = (config: unknown, content: string) =>
  post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': JSON.stringify(config) }), chat(content));

async function put(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await request(`${gw.url}${path}`, { method: 'PUT', headers: gw.headers(), body: JSON.stringify(body) });
  return { status: r.statusCode, json: await r.body.json() };
}

const guardrail = (word: string) => ({
  name: 'No secrets',
  checks: [{ id: 'default.contains', parameters: { words: [word], operator: 'none' } }],
  actions: { onFail: 'block' },
  workspace_id: 'ws-guard',
});

describe('stored guardrails named by configs', () => {
  it('latest by string, pinned by version_id, and an edit is seen by the next request', async () => {
    const created = await post(`${gw.url}/v1/guardrails`, gw.headers(), guardrail('alpha'));
    expect(created.status).toBe(201);
    const { id, slug, version_id: v1 } = created.json;

    const bySlug = { ...target(), input_guardrails: [slug] };
    expect((await send(bySlug, 'say alpha')).status).toBe(446);
    expect((await send(bySlug, 'say beta')).status).toBe(200);

    const updated = await put(`/v1/guardrails/${id}`, guardrail('beta'));
    expect(updated.status).toBe(200);
    expect(updated.json.version_id).not.toBe(v1);

    // The same config (its plan cached) now uses the new version.
    expect((await send(bySlug, 'say alpha')).status).toBe(200);
    const denied = await send(bySlug, 'say beta');
    expect(denied.status).toBe(446);
    expect(denied.json.hook_results.before_request_hooks[0].id).toBe(slug);

    // Pinned to the first version: still the old words.
    const pinned = { ...target(), input_guardrails: [{ id, version_id: v1 }] };
    expect((await send(pinned, 'say alpha')).status).toBe(446);
    expect((await send(pinned, 'say beta')).status).toBe(200);
  });

  it('an unknown stored guardrail is a 400 naming the path', async () => {
    const r = await send({ ...target(), output_guardrails: ['no-such-guardrail'] }, 'hi');
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_config');
    expect(r.json.error.param).toBe('config.output_guardrails[0]');
  });

  it('a guardrail whose checks are invalid is refused by the API with the check library', async () => {
    const r = await post(`${gw.url}/v1/guardrails`, gw.headers(), { ...guardrail('x'), checks: [{ id: 'default.noSuchCheck', parameters: {} }] });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_config');
  });
});

describe('stored guardrails are looked up in the scope of the request\'s gateway key', () => {
  const KEY_A = 'sk-test-guard-workspace-a-0123456789';
  const KEY_B = 'sk-test-guard-workspace-b-0123456789';
  let scoped: TestGateway;
  beforeAll(async () => {
    scoped = await startGateway({
      bootstrapYaml: `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a }
  - { key: ${KEY_B}, name: team-b, workspace_id: ws-b }
`,
    });
  });
  afterAll(async () => {
    await scoped?.close();
  });
  const as = (key: string, config: unknown, content: string) =>
    post(`${scoped.url}/v1/chat/completions`, { 'content-type': 'application/json', 'x-gateway-api-key': key, 'x-gateway-config': JSON.stringify(config) }, chat(content));

  it('a workspace key uses its own workspace\'s guardrail; another workspace\'s key cannot name it, even after the same config was served (plan cache)', async () => {
    const created = await post(`${scoped.url}/v1/guardrails`, { 'content-type': 'application/json', 'x-gateway-api-key': KEY_A }, { ...guardrail('alpha'), workspace_id: undefined });
    expect(created.status).toBe(201);
    const config = { ...target(), input_guardrails: [created.json.slug] };

    expect((await as(KEY_A, config, 'say alpha')).status).toBe(446);
    const other = await as(KEY_B, config, 'say alpha');
    expect(other.status).toBe(400);
    expect(other.json.error.param).toBe('config.input_guardrails[0]');
    const byId = await as(KEY_B, { ...target(), input_guardrails: [created.json.id] }, 'say alpha');
    expect(byId.status).toBe(400);
    // and the owner's plan, cached, still denies
    expect((await as(KEY_A, config, 'say alpha')).status).toBe(446);
  });

  it('each workspace resolves the same slug to its own guardrail', async () => {
    const a = await post(`${scoped.url}/v1/guardrails`, { 'content-type': 'application/json', 'x-gateway-api-key': KEY_A }, { ...guardrail('apples'), name: 'Fruit', workspace_id: undefined });
    const b = await post(`${scoped.url}/v1/guardrails`, { 'content-type': 'application/json', 'x-gateway-api-key': KEY_B }, { ...guardrail('bananas'), name: 'Fruit', workspace_id: undefined });
    expect(a.json.slug).toBe(b.json.slug);
    const config = { ...target(), input_guardrails: [a.json.slug] };
    expect((await as(KEY_A, config, 'apples')).status).toBe(446);
    expect((await as(KEY_A, config, 'bananas')).status).toBe(200);
    expect((await as(KEY_B, config, 'apples')).status).toBe(200);
    expect((await as(KEY_B, config, 'bananas')).status).toBe(446);
  });
});
