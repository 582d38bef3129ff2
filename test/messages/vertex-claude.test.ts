import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { FakeVertex } from '../fakes/vertex-server.js';
import { configClient, useFakeGateway } from './_door.js';
import { post } from '../helpers/http.js';
import { defaultProviders, ProviderRegistry } from '../../src/providers/registry.js';
import type { ChatBridge } from '../../src/providers/bridges/index.js';
import type { GatewayError } from '../../src/errors/gateway-error.js';
import { toVertex } from '../../src/providers/vertex-ai/to-provider.js';

/** Claude on cloud C (Vertex AI rawPredict / streamRawPredict), reached through the Messages door. */
const TOKEN = 'ya29.static-test-token';

const vertexTarget = () => ({ provider: 'vertex-ai', api_key: TOKEN, custom_host: rig.fake.baseUrl, cloud_c_region: 'us-east5', cloud_c_project_id: 'claude-project' });
const client = (): Anthropic => configClient(rig.gw, vertexTarget(), { 'anthropic-beta': 'context-1m-2025-08-07' });
const ask = { model: 'claude-sonnet-4-5@20250929', max_tokens: 64, messages: [{ role: 'user' as const, content: 'ping' }], top_k: 3 };

const rig = useFakeGateway(async () => {
  const f = await FakeVertex.start();
  f.staticTokens.add(TOKEN);
  return f;
});

describe('Claude on Vertex AI through the Messages door', () => {
  it('messages.create: rawPredict with the model in the path, anthropic_version in the body, the rest as sent; the answer as Anthropic’s', async () => {
    const msg = await client().messages.create(ask);
    expect(msg).toMatchObject({ id: 'msg_vrtx_fake', content: [{ type: 'text', text: 'echo: ping' }], usage: { input_tokens: 8, output_tokens: 2 } });
    const up = rig.fake.requests.at(-1)!;
    expect(up.path).toBe('/v1/projects/claude-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5%4020250929:rawPredict');
    const { model: _m, ...rest } = ask;
    expect(up.body).toEqual({ anthropic_version: 'vertex-2023-10-16', ...rest });
    expect(up.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
  });

  it('messages.stream: streamRawPredict, the events passed on as received', async () => {
    const final = await client().messages.stream(ask).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'echo: ping' }]);
    expect(rig.fake.requests.at(-1)!.path).toMatch(/:streamRawPredict$/);
    const raw = await post(`${rig.gw.url}/v1/messages`, rig.gw.headers({ 'x-gateway-config': JSON.stringify(vertexTarget()) }), { ...ask, stream: true });
    expect(raw.text.startsWith('event: message_start\ndata: {"type":"message_start"')).toBe(true);
    expect(raw.text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
  });

  it('the registry serves Messages natively on Vertex for Claude models only; other models go through the bridge', () => {
    const bridge = { endpoint: 'messages' } as ChatBridge;
    const registry = new ProviderRegistry(defaultProviders(), {}, [bridge]);
    const vertex = registry.get('vertex-ai');
    expect(registry.serving(vertex, 'messages', 'claude-sonnet-4-5@20250929')).toBe(vertex);
    expect(registry.serving(vertex, 'messages', 'publishers/anthropic/models/claude-haiku-4-5')).toBe(vertex);
    expect(registry.serving(vertex, 'messages', 'gemini-2.5-flash')).not.toBe(vertex);
    expect(registry.serving(vertex, 'chat', 'gemini-2.5-flash')).toBe(vertex);
  });

  it('asked for a Messages request of another model (no bridge took it), the translation refuses it, naming the model', () => {
    const req = { endpoint: 'messages' as const, body: { ...ask, model: 'gemini-2.5-flash' }, stream: false, headers: {} };
    const refusal = (() => {
      try {
        toVertex(req, { provider: 'vertex-ai', api_key: TOKEN, extra: { cloud_c_region: 'us-east5', cloud_c_project_id: 'claude-project' } }, 'https://x.test');
      } catch (e) {
        return e as GatewayError;
      }
    })();
    expect([refusal?.code, refusal?.param]).toEqual(['unsupported_endpoint', 'model']);
  });
});
