/**
 * Routing and metrics are provider-blind. A fallback from one OpenAI-compatible
 * catalog provider to another (two fakes): the answer names the provider that served it, and the
 * /metrics labels carry each attempt's provider (the descriptor id), stream and non-stream alike.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatChunks, FakeOpenAI, openAIError, sseFrames } from '../fakes/openai-server.js';
import { parseSse } from '../helpers/sse.js';

let first: FakeOpenAI;
let second: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  [first, second] = await Promise.all([FakeOpenAI.start(), FakeOpenAI.start()]);
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([first?.close(), second?.close()]);
});

const config = () =>
  JSON.stringify({
    strategy: { mode: 'fallback' },
    targets: [
      { name: 'fast', provider: 'groq', api_key: 'gsk-fake-1', custom_host: first.baseUrl },
      { name: 'steady', provider: '@together-ai', api_key: 'tg-fake-2', custom_host: second.baseUrl },
    ],
  });

async function metricValue(pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  return text.split('\n').filter((l) => pattern.test(l)).reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

describe('a fallback across two catalog providers', () => {
  it('JSON: groq 503 → together answers; headers and metric labels name the descriptor ids', async () => {
    first.enqueue('/v1/chat/completions', openAIError(503, 'over capacity'));
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gw.headers({ 'x-gateway-config': config() }),
      body: JSON.stringify({ model: 'llama', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-provider')).toBe('together');
    expect(res.headers.get('x-gateway-target')).toBe('config.targets[1]');
    expect((await first.waitForRequests(1))[0]!.headers.authorization).toBe('Bearer gsk-fake-1');
    expect((await second.waitForRequests(1))[0]!.headers.authorization).toBe('Bearer tg-fake-2');
    await vi.waitFor(async () => {
      expect(await metricValue(/^sluice_target_requests_total\{.*target="fast".*provider="groq".*status_class="5xx"/)).toBe(1);
      expect(await metricValue(/^sluice_target_requests_total\{.*target="steady".*provider="together".*status_class="2xx"/)).toBe(1);
      expect(await metricValue(/^gen_ai_client_token_usage_total\{.*gen_ai_system="together"/)).toBeGreaterThan(0);
    });
  });

  it('stream: the same fallback before the first chunk; the SSE answer comes from together', async () => {
    first.enqueue('/v1/chat/completions', openAIError(429, 'slow down'));
    second.enqueue('/v1/chat/completions', { stream: { frames: sseFrames(chatChunks(['a', 'b'], { includeUsage: true })) } });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gw.headers({ 'x-gateway-config': config() }),
      body: JSON.stringify({ model: 'llama', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-provider')).toBe('together');
    const frames = parseSse(await res.text());
    expect(frames.at(-1)!.data).toBe('[DONE]');
    await vi.waitFor(async () => {
      expect(await metricValue(/^sluice_target_requests_total\{.*provider="groq".*status_class="4xx"/)).toBe(1);
      expect(await metricValue(/^gen_ai_server_time_to_first_token_seconds_count\{.*gen_ai_system="together"/)).toBe(1);
    });
  });
});
