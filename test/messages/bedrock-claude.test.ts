import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { claudeChunks, claudeTextEvents, FakeBedrock } from '../fakes/bedrock-server.js';
import { configClient, useFakeGateway } from './_door.js';
import { post } from '../helpers/http.js';

/** Claude on cloud B (Bedrock InvokeModel, SigV4-signed), reached through the Messages door. */
const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';

const target = () => ({
  provider: 'bedrock',
  custom_host: rig.fake.url,
  cloud_b_access_key_id: rig.fake.credentials.accessKeyId,
  cloud_b_secret_access_key: rig.fake.credentials.secretAccessKey,
  cloud_b_region: rig.fake.region,
});
const client = (): Anthropic => configClient(rig.gw, target(), { 'anthropic-beta': 'interleaved-thinking-2025-05-14, context-1m-2025-08-07' });
const ask = { model: MODEL, max_tokens: 64, messages: [{ role: 'user' as const, content: 'ping' }], system: [{ type: 'text' as const, text: 'terse', cache_control: { type: 'ephemeral' as const } }] };

const rig = useFakeGateway(async () => {
  const f = await FakeBedrock.start();
  return f;
});

describe('Claude on Bedrock through the Messages door', () => {
  it('messages.create: InvokeModel, signed, anthropic_version and the beta flags in the body, the rest as sent; Anthropic’s answer', async () => {
    const msg = await client().messages.create(ask);
    expect(msg).toMatchObject({ id: 'msg_bdrk_fake', content: [{ type: 'text', text: 'echo: ping' }] });
    const up = rig.fake.requests.at(-1)!;
    expect([up.operation, up.modelId, up.auth]).toEqual(['invoke', MODEL, 'sigv4']);
    const { model: _m, ...rest } = ask;
    expect(up.body).toEqual({ anthropic_version: 'bedrock-2023-05-31', ...rest, anthropic_beta: ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'] });
  });

  it('messages.stream: each chunk’s Anthropic event passed on by name, Bedrock’s metrics on message_stop kept', async () => {
    const final = await client().messages.stream(ask).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'echo: ping' }]);
    expect(rig.fake.requests.at(-1)!.operation).toBe('invoke-with-response-stream');
    const events = claudeTextEvents('hello');
    rig.fake.enqueue({ kind: 'stream', events: claudeChunks(events) });
    const raw = await post(`${rig.gw.url}/v1/messages`, rig.gw.headers({ 'x-gateway-config': JSON.stringify(target()) }), { ...ask, stream: true });
    expect(raw.text).toBe(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''));
  });

  it('a throttling exception before the first event is the stream’s error (a fallback could still take it)', async () => {
    rig.fake.enqueue({ kind: 'stream', events: [], exceptionAfter: { count: 0, type: 'throttlingException', message: 'Too many requests' } });
    const raw = await post(`${rig.gw.url}/v1/messages`, rig.gw.headers({ 'x-gateway-config': JSON.stringify(target()) }), { ...ask, stream: true });
    expect(raw.status).toBe(429);
    expect(raw.json).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: 'Too many requests' } });
  });
});
