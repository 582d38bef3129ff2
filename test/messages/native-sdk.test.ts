import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { ANTHROPIC_KEY, useDoor } from './_door.js';

const door = useDoor();

describe('the Anthropic SDK through the gateway to Anthropic, natively', () => {
  it('messages.create: the body goes upstream JSON-equal, the answer comes back as Anthropic sent it', async () => {
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }],
      messages: [{ role: 'user' as const, content: 'ping' }],
      top_k: 5,
    };
    const { data, response } = await door.sdk().messages.create(body).withResponse();
    expect(data).toEqual({
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'echo: ping' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(response.headers.get('x-gateway-provider')).toBe('anthropic');
    const [up] = await door.fake.waitForRequests(1);
    expect(up!.path).toBe('/v1/messages');
    expect(up!.body).toEqual(body);
    expect(up!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    // The client's API version, not the gateway's default.
    expect(up!.headers['anthropic-version']).toBe('2026-10-21');
  });

  it('a body the gateway cannot route is a 400 in Anthropic’s envelope, naming the field: the SDK’s BadRequestError', async () => {
    const err = await door.sdk()
      .messages.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] } as never)
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const e = err as InstanceType<typeof Anthropic.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_request_body', param: 'max_tokens' } });
    expect(door.fake.requests).toHaveLength(0);
  });
});
