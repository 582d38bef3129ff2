import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { FAKE_ANTHROPIC_MODELS, fakeTokenCount } from '../fakes/anthropic-server.js';
import { post } from '../helpers/http.js';
import { useDoor } from './_door.js';

const door = useDoor();
const failure = <T>(p: Promise<T>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);

describe('count_tokens and the model list in Anthropic’s shape', () => {
  it('messages.countTokens goes to Anthropic as it is and answers its count', async () => {
    const body = {
      model: 'claude-sonnet-4-5',
      system: 'You are terse.',
      messages: [{ role: 'user' as const, content: 'How many tokens is this?' }],
      tools: [{ name: 'noop', input_schema: { type: 'object' as const } }],
    };
    const count = await door.sdk().messages.countTokens(body);
    expect(count).toEqual({ input_tokens: fakeTokenCount(body) });
    const [up] = await door.fake.waitForRequests(1);
    expect(up!.path).toBe('/v1/messages/count_tokens');
    expect(up!.body).toEqual(body);
  });

  it('Claude Code’s /v1/messages/count_tokens?beta=true, and a count is not a billed request', async () => {
    const body = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] };
    const res = await post(`${door.gw.url}/v1/messages/count_tokens?beta=true`, door.gw.headers({ 'x-gateway-virtual-key': 'claude', 'anthropic-version': '2023-06-01' }), body);
    expect([res.status, res.json]).toEqual([200, { input_tokens: fakeTokenCount(body) }]);
    expect(door.gw.logs.findLast((l) => l.path === '/v1/messages/count_tokens')?.usage).toBeUndefined();
  });

  it('a count without messages is the gateway’s 400 in Anthropic’s envelope', async () => {
    const err = await failure(door.sdk().messages.countTokens({ model: 'claude-sonnet-4-5' } as never));
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ error: { type: 'invalid_request_error', param: 'messages' } });
  });

  it('models.list and models.retrieve: Anthropic’s shape when anthropic-version is sent', async () => {
    const page = await door.sdk().models.list();
    expect(page.data.map((m) => [m.type, m.id, m.created_at])).toEqual(FAKE_ANTHROPIC_MODELS.map((m) => ['model', m.id, new Date(m.created_at).toISOString()]));
    const one = await door.sdk().models.retrieve('claude-haiku-4-5');
    expect(one).toMatchObject({ type: 'model', id: 'claude-haiku-4-5', display_name: 'claude-haiku-4-5' });
    const missing = await failure(door.sdk().models.retrieve('claude-nope'));
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect((missing as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error', code: 'model_not_found' } });
  });

  it('without anthropic-version, GET /v1/models stays OpenAI’s list', async () => {
    const res = await fetch(`${door.gw.url}/v1/models`, { headers: door.gw.headers({ 'x-gateway-virtual-key': 'claude' }) });
    const list = (await res.json()) as { object: string; data: { object: string }[] };
    expect(list.object).toBe('list');
    expect(list.data[0]!.object).toBe('model');
  });
});
