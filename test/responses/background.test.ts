import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatCompletion, FakeOpenAI, type ScriptedResponse } from '../fakes/openai-server.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

/**
 * Background responses with the official openai SDK: `queued` when answered, `in_progress` while
 * the upstream call runs (on every instance of one Redis), then the final status; a request a
 * usage limit refuses is refused at once, as a synchronous one is; cancel on another instance
 * stops the run.
 */
const KEY = 'sk-test-background-ws-0123456789';
const BOOTSTRAP = `
api_keys:
  - { key: ${KEY}, name: team-bg, workspace_id: ws-bg, organisation_id: org-bg }
usage_limits:
  - name: A few tokens of gpt-4o-mini
    type: tokens
    workspace_id: ws-bg
    organisation_id: org-bg
    conditions: [{ key: model, value: gpt-4o-mini }]
    credit_limit: 1
`;

let fake: FakeOpenAI;

function sdk(gw: TestGateway): OpenAI {
  return new OpenAI({
    apiKey: 'sk-compat',
    baseURL: `${gw.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': KEY, 'x-gateway-provider': 'openai-compatible', 'x-gateway-custom-host': fake.baseUrl },
  });
}

/** The next chat completion waits for `release()`: a background run held in flight. */
function held(): { release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  fake.enqueue('/v1/chat/completions', async (): Promise<ScriptedResponse> => {
    await gate;
    return { json: chatCompletion('done at last') };
  });
  return { release };
}

beforeAll(async () => {
  fake = await FakeOpenAI.start();
});
afterEach(() => fake.reset());
afterAll(async () => {
  await fake?.close();
});

describe('background responses on one instance', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ bootstrapYaml: BOOTSTRAP, options: { 'background-max-per-key': '1' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('queued when answered, in_progress while the upstream call runs, then completed', async () => {
    const { release } = held();
    const client = sdk(gw);
    const queued = await client.responses.create({ model: 'gpt-4o', input: 'later', background: true });
    expect(queued).toMatchObject({ status: 'queued', background: true, output: [] });
    await fake.waitForRequests(1);
    expect((await client.responses.retrieve(queued.id)).status).toBe('in_progress');
    release();
    await expect.poll(async () => (await client.responses.retrieve(queued.id)).status, { timeout: 5_000 }).toBe('completed');
    expect((await client.responses.retrieve(queued.id)).output_text).toBe('done at last');
  });

  it('a request a usage limit refuses is refused at once, as the synchronous one; nothing runs or stays held', async () => {
    const client = sdk(gw);
    await client.responses.create({ model: 'gpt-4o-mini', input: 'uses the limit up' });
    const sync = await client.responses.create({ model: 'gpt-4o-mini', input: 'refused' }).catch((e: unknown) => e);
    const background = await client.responses.create({ model: 'gpt-4o-mini', input: 'refused', background: true }).catch((e: unknown) => e);
    expect(sync).toMatchObject({ status: 412, code: 'usage_limit_exceeded' });
    expect(background).toMatchObject({ status: 412, code: 'usage_limit_exceeded' });
    expect(fake.requests).toHaveLength(1);
    // --background-max-per-key is 1: the refused run left no place taken
    const other = await client.responses.create({ model: 'gpt-4o', input: 'another model', background: true });
    await expect.poll(async () => (await client.responses.retrieve(other.id)).status, { timeout: 5_000 }).toBe('completed');
  });
});

describe('background responses with --redis: every instance sees the run', () => {
  let server: RedisServer;
  let gw1: TestGateway;
  let gw2: TestGateway;
  beforeAll(async () => {
    server = await startRedisServer();
    gw1 = await startGateway({ bootstrapYaml: BOOTSTRAP, options: { redis: server.url } });
    gw2 = await startGateway({ bootstrapYaml: BOOTSTRAP, options: { redis: server.url } });
  });
  afterAll(async () => {
    await gw1?.close();
    await gw2?.close();
    await server?.close();
  });

  it('the second instance shows it in_progress while the first runs it, then completed', async () => {
    const { release } = held();
    const queued = await sdk(gw1).responses.create({ model: 'gpt-4o', input: 'later', background: true });
    await fake.waitForRequests(1);
    const other = sdk(gw2);
    expect((await other.responses.retrieve(queued.id)).status).toBe('in_progress');
    release();
    await expect.poll(async () => (await other.responses.retrieve(queued.id)).status, { timeout: 5_000 }).toBe('completed');
  });

  it('cancel through the second instance stops the run on the first: its upstream call aborted, stored cancelled', async () => {
    fake.enqueue('/v1/chat/completions', { hang: true });
    const queued = await sdk(gw1).responses.create({ model: 'gpt-4o', input: 'never mind', background: true });
    const [up] = await fake.waitForRequests(1);
    const cancelled = await sdk(gw2).responses.cancel(queued.id);
    expect(cancelled).toMatchObject({ id: queued.id, status: 'cancelled' });
    await up!.closed;
    expect(up!.aborted).toBe(true);
    expect((await sdk(gw1).responses.retrieve(queued.id)).status).toBe('cancelled');
  });

  it('cancel of a response that has ended is answered as stored, on any instance', async () => {
    const done = await sdk(gw1).responses.create({ model: 'gpt-4o', input: 'quick', background: true });
    await expect.poll(async () => (await sdk(gw2).responses.retrieve(done.id)).status, { timeout: 5_000 }).toBe('completed');
    expect(await sdk(gw2).responses.cancel(done.id)).toMatchObject({ id: done.id, status: 'completed' });
  });
});
