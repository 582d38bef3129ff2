/**
 * Helpers shared by the routing and metrics integration tests (not a test file itself). The gateway
 * is test/helpers/gateway.ts's `startGateway` (it takes `now` and `random`).
 */
import type { FakeOpenAI } from '../fakes/openai-server.js';
import type { TestGateway } from '../helpers/gateway.js';
import { post, type Answer } from '../helpers/http.js';

export { type Answer } from '../helpers/http.js';

export const PROVIDER_KEY = 'sk-provider-secret-routing-9f3a';

export { FakeClock } from '../helpers/clock.js';

/** A config target that reaches `fake` as provider openai. */
export function target(fake: FakeOpenAI, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { provider: 'openai', custom_host: fake.baseUrl, api_key: PROVIDER_KEY, ...extra };
}

export const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
export const STREAM_CHAT = { ...CHAT, stream: true };

/** POST /v1/chat/completions through the gateway with `config` in x-gateway-config. */
export function chat(gw: TestGateway, config: unknown, opts: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  return post(`${gw.url}/v1/chat/completions`, gw.headers({ 'x-gateway-config': JSON.stringify(config), ...opts.headers }), opts.body ?? CHAT);
}

export { chatContent, parseSse, type SseFrame } from '../helpers/sse.js';

/** A promise with its resolve handle, to hold a fake's answer until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
