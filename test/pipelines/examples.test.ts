import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadPipelines } from '../../src/config/pipelines.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/** Every saved config shipped in pipelines/ is valid and works end to end against fake providers. */
describe('pipelines/ examples', () => {
  const saved = loadPipelines('pipelines', true);
  let primary: FakeOpenAI;
  let backup: FakeOpenAI;
  let gw: TestGateway;

  beforeAll(async () => {
    primary = await FakeOpenAI.start();
    backup = await FakeOpenAI.start();
    gw = await startGateway({
      savedConfigs: saved,
      bootstrapYaml: `
virtual_keys:
  openai-primary: { provider: openai, api_key: sk-primary, custom_host: "${primary.baseUrl}" }
  openai-backup: { provider: openai, api_key: sk-backup, custom_host: "${backup.baseUrl}" }
`,
    });
  });
  afterAll(async () => {
    await gw?.close();
    await primary?.close();
    await backup?.close();
  });

  it('ships several examples', () => {
    expect([...saved.keys()].sort()).toEqual(
      expect.arrayContaining(['conditional', 'fallback', 'fallback-of-loadbalance', 'least-latency', 'loadbalance', 'race', 'single-retry']),
    );
  });

  it.each([...saved.keys()])('%s answers a chat completion', async (id) => {
    const before = primary.requests.length + backup.requests.length;
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gw.headers({ 'x-gateway-config': id }),
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await res.body.json()) as { choices: { message: { content: string } }[] };
    expect(res.statusCode).toBe(200);
    expect(body.choices[0]!.message.content).toBe('echo: hi');
    expect(res.headers['x-gateway-target']).toMatch(/^config/);
    expect(primary.requests.length + backup.requests.length).toBeGreaterThan(before);
  });

  it('the fallback example moves to the backup when the primary fails', async () => {
    primary.enqueue('/v1/chat/completions', { status: 503, json: { error: { message: 'down' } } }, { status: 503, json: { error: { message: 'down' } } });
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gw.headers({ 'x-gateway-config': 'fallback' }),
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-gateway-target']).toBe('config.targets[1]');
    expect(backup.requests.at(-1)!.body.model).toBe('gpt-4o-mini');
  });
});
