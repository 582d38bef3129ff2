import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { ANTHROPIC_KEY, useDoor } from './_door.js';

const door = useDoor();
const ask = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content: 'ping' }] };
const failure = <T>(p: Promise<T>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);

describe('credentials the way the Anthropic clients send them', () => {
  it('the gateway key as x-api-key (what Claude Code sends for ANTHROPIC_API_KEY): the provider key comes from the virtual key, the gateway key goes nowhere', async () => {
    const client = door.sdk({ 'x-gateway-api-key': null, 'x-api-key': door.gw.key }, { apiKey: null });
    const msg = await client.messages.create(ask);
    expect(msg.content).toEqual([{ type: 'text', text: 'echo: ping' }]);
    const [up] = await door.fake.waitForRequests(1);
    expect(up!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(JSON.stringify(up!.headers)).not.toContain(door.gw.key);
  });

  it('the gateway key as Authorization: Bearer (ANTHROPIC_AUTH_TOKEN; this SDK sends its apiKey so too)', async () => {
    for (const opts of [{ apiKey: null, authToken: door.gw.key }, { apiKey: door.gw.key }]) {
      door.fake.reset();
      await door.sdk({ 'x-gateway-api-key': null }, opts).messages.create(ask);
      const [up] = await door.fake.waitForRequests(1);
      expect(up!.headers.authorization).toBeUndefined();
      expect(up!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    }
  });

  it('an x-api-key that is no gateway key, without x-gateway-api-key: the SDK’s AuthenticationError, in Anthropic’s envelope', async () => {
    const err = await failure(door.sdk({ 'x-gateway-api-key': null, 'x-api-key': 'sk-ant-not-ours' }, { apiKey: null }).messages.create(ask));
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error', code: 'missing_gateway_key', param: 'x-api-key' },
    });
    expect(door.fake.requests).toHaveLength(0);
  });

  it('anthropic-version and anthropic-beta are forwarded as the client sent them', async () => {
    const client = door.sdk({ 'anthropic-beta': 'interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14', 'anthropic-version': '2023-06-01' });
    await client.messages.create(ask);
    const [up] = await door.fake.waitForRequests(1);
    expect(up!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14');
    expect(up!.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('the beta namespace (`?beta=true`, betas as anthropic-beta) reaches the same door', async () => {
    const msg = await door.sdk().beta.messages.create({ ...ask, betas: ['context-1m-2025-08-07'] });
    expect(msg.content).toEqual([{ type: 'text', text: 'echo: ping' }]);
    const [up] = await door.fake.waitForRequests(1);
    expect(up!.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
  });
});
