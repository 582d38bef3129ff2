import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { FakeAnthropic } from '../fakes/anthropic-server.js';

/**
 * The Responses API end to end with the official openai SDK: what POST answers is stored and read
 * back, a conversation continues by previous_response_id on another provider, a background response
 * is polled to completion and another cancelled.
 */
const ANT_KEY = 'sk-ant-lifecycle';

let chatHost: FakeOpenAI;
let anthropic: FakeAnthropic;
let gw: TestGateway;

function sdk(provider: 'openai-compatible' | 'anthropic'): OpenAI {
  return new OpenAI({
    apiKey: provider === 'anthropic' ? ANT_KEY : 'sk-compat',
    baseURL: `${gw.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: {
      'x-gateway-api-key': gw.key,
      'x-gateway-provider': provider,
      'x-gateway-custom-host': provider === 'anthropic' ? anthropic.baseUrl : chatHost.baseUrl,
    },
  });
}

beforeAll(async () => {
  chatHost = await FakeOpenAI.start();
  anthropic = await FakeAnthropic.start(ANT_KEY);
  gw = await startGateway();
});

afterEach(() => {
  chatHost.reset();
  anthropic.reset();
});

afterAll(async () => {
  await gw?.close();
  await chatHost?.close();
  await anthropic?.close();
});

describe('stored responses through POST /v1/responses', () => {
  it('a created response is retrieved as stored, its input items listed, and deleted', async () => {
    const client = sdk('openai-compatible');
    const created = await client.responses.create({ model: 'gpt-4o-mini', input: 'ping', metadata: { team: 'a' } });
    const got = await client.responses.retrieve(created.id);
    expect(got).toMatchObject({ id: created.id, status: 'completed', metadata: { team: 'a' }, output: created.output });
    const items = await client.responses.inputItems.list(created.id);
    expect(items.data).toEqual([expect.objectContaining({ id: expect.any(String), role: 'user' })]);
    await client.responses.delete(created.id);
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('a streamed response is stored completed, with the text the stream carried', async () => {
    const client = sdk('anthropic');
    const stream = client.responses.stream({ model: 'claude-3-5-haiku-latest', input: 'hello there' });
    const final = await stream.finalResponse();
    const got = await client.responses.retrieve(final.id);
    expect(got.status).toBe('completed');
    expect(got.output_text).toBe(final.output_text);
    expect(got.output_text.length).toBeGreaterThan(0);
  });

  it('previous_response_id continues the conversation on another provider, without the earlier instructions', async () => {
    const first = await sdk('openai-compatible').responses.create({ model: 'gpt-4o-mini', input: 'My name is Ada.', instructions: 'Be terse.' });
    const second = await sdk('anthropic').responses.create({ model: 'claude-3-5-haiku-latest', input: 'What is my name?', previous_response_id: first.id });
    const [up] = await anthropic.waitForRequests(1);
    const body = up!.body as { system?: unknown; messages: { role: string; content: unknown }[] };
    expect(body.system).toBeUndefined();
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(body.messages[1]!.content)).toContain(first.output_text);
    expect(second.previous_response_id).toBe(first.id);
    expect(second.status).toBe('completed');
  });

  it('background: answered at once, polled until completed', async () => {
    const client = sdk('openai-compatible');
    const queued = await client.responses.create({ model: 'gpt-4o-mini', input: 'later', background: true });
    expect(['queued', 'in_progress']).toContain(queued.status);
    await expect.poll(async () => (await client.responses.retrieve(queued.id)).status, { timeout: 5_000 }).toBe('completed');
  });

  it('background: cancel aborts the upstream call and leaves the response cancelled', async () => {
    chatHost.enqueue('/v1/chat/completions', { hang: true });
    const client = sdk('openai-compatible');
    const queued = await client.responses.create({ model: 'gpt-4o-mini', input: 'never mind', background: true });
    const [up] = await chatHost.waitForRequests(1);
    const cancelled = await client.responses.cancel(queued.id);
    expect(cancelled.status).toBe('cancelled');
    await up!.closed;
    expect(up!.aborted).toBe(true);
    expect((await client.responses.retrieve(queued.id)).status).toBe('cancelled');
  });
});
