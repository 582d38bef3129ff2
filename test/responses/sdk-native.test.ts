import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { fakeResponseObject, responseEvents, responsesEventFrames } from '../fakes/openai-responses.js';
import { gatewayAndFake } from './harness.js';

/** The official openai SDK's `responses.*` against the gateway in front of OpenAI, which has its own Responses API. */
const env = gatewayAndFake();
let sdk: OpenAI | undefined;
const client = (): OpenAI =>
  (sdk ??= new OpenAI({
    apiKey: 'sk-openai',
    baseURL: `${env.gw.url}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': env.gw.key, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': env.fake.baseUrl },
  }));

describe('OpenAI serves /responses itself: passed through', () => {
  it('responses.create: the body goes as sent (unknown fields and built-in tools included), the answer comes back as OpenAI wrote it', async () => {
    const body = { model: 'gpt-4o', input: 'ping', tools: [{ type: 'web_search' as const }], include: ['web_search_call.action.sources' as const], store: false, top_k: 2 };
    const { data: r, response } = await client().responses.create(body as never).withResponse();
    const [up] = await env.fake.waitForRequests(1);
    expect(up!.path).toBe('/v1/responses');
    expect(up!.body).toEqual(body);
    expect(up!.headers.authorization).toBe('Bearer sk-openai');
    expect(r.id).toMatch(/^resp_fake/);
    expect(r.model).toBe('gpt-4o-2025-01-01');
    expect(r.output_text).toBe('echo: ping');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
  });

  it("responses.stream(): OpenAI's events pass as they came, named; the stream ends after response.completed", async () => {
    const stream = client().responses.stream({ model: 'gpt-4o', input: 'hey' });
    const events: { type: string; sequence_number: number }[] = [];
    for await (const ev of stream) events.push(ev);
    const final = await stream.finalResponse();
    const [up] = await env.fake.waitForRequests(1);
    expect(up!.body).toEqual({ model: 'gpt-4o', input: 'hey', stream: true });
    expect(events.map((e) => e.type)).toEqual(responseEvents(fakeResponseObject({}, 'x'), ['e', 'cho: hey']).map((e) => e.type));
    expect(final.id).toMatch(/^resp_fake/);
    expect(final.output_text).toBe('echo: hey');
  });

  it('the usage of a passed-through answer is counted (request log) for JSON and streams', async () => {
    env.fake.enqueue('/v1/responses', { json: fakeResponseObject({ model: 'gpt-4o' }, 'a', { input_tokens: 30, output_tokens: 7 }) });
    await client().responses.create({ model: 'gpt-4o', input: 'x' });
    const response = fakeResponseObject({ model: 'gpt-4o' }, 'b', { input_tokens: 40, output_tokens: 9 });
    env.fake.enqueue('/v1/responses', { stream: { frames: responsesEventFrames(responseEvents(response, ['b'])) } });
    for await (const _ of await client().responses.create({ model: 'gpt-4o', input: 'y', stream: true }));
    const lines = env.gw.logs.filter((l) => l.path === '/v1/responses' && l.status !== undefined);
    expect(lines.slice(-2).map((l) => [l.usage?.prompt_tokens, l.usage?.completion_tokens])).toEqual([
      [30, 7],
      [40, 9],
    ]);
  });

  it("an upstream error event ends the stream with the gateway's error", async () => {
    env.fake.enqueue('/v1/responses', {
      stream: { frames: responsesEventFrames([{ type: 'response.created', response: { id: 'resp_x', object: 'response', status: 'in_progress', output: [] } }, { type: 'error', code: 'server_error', message: 'boom' }]) },
    });
    const stream = await client().responses.create({ model: 'gpt-4o', input: 'x', stream: true });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const ev of stream) seen.push(ev.type);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['response.created']);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String((err as Error).message)).toContain('boom');
  });
});
