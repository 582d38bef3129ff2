import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { EXCHANGE_TIMEOUT_MS } from '../helpers/http.js';
import { ANTHROPIC_KEY, useDoor } from './_door.js';
import { CLAUDE_CODE_BODY, CLAUDE_CODE_HEADERS, CLAUDE_CODE_STREAM } from './fixtures/claude-code.js';

const door = useDoor();

/** Claude Code's request as it sends it: ANTHROPIC_BASE_URL at the gateway, its key as x-api-key, the virtual key by ANTHROPIC_CUSTOM_HEADERS. */
async function replay(): Promise<{ status: number; text: string }> {
  const res = await request(`${door.gw.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { ...CLAUDE_CODE_HEADERS, 'x-api-key': door.gw.key, 'x-gateway-virtual-key': 'claude' },
    body: CLAUDE_CODE_BODY,
    headersTimeout: EXCHANGE_TIMEOUT_MS,
    bodyTimeout: EXCHANGE_TIMEOUT_MS,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

describe('a Claude Code turn through the gateway to Anthropic', () => {
  it('the upstream receives exactly the bytes Claude Code sent, with its version and beta flags and the provider key', async () => {
    door.fake.enqueue('/v1/messages', { frames: CLAUDE_CODE_STREAM });
    await replay();
    const [up] = await door.fake.waitForRequests(1);
    expect(up!.raw).toBe(CLAUDE_CODE_BODY);
    expect(up!.path).toBe('/v1/messages');
    expect(up!.headers['anthropic-version']).toBe(CLAUDE_CODE_HEADERS['anthropic-version']);
    expect(up!.headers['anthropic-beta']).toBe(CLAUDE_CODE_HEADERS['anthropic-beta']);
    expect(up!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(JSON.stringify(up!.headers)).not.toContain(door.gw.key);
  });

  it('the answer is the stream Anthropic sent, byte for byte, split across reads or not', async () => {
    door.fake.enqueue('/v1/messages', { frames: CLAUDE_CODE_STREAM });
    const whole = await replay();
    expect(whole.status).toBe(200);
    expect(whole.text).toBe(CLAUDE_CODE_STREAM.join(''));
    // Split inside events, and inside a multi-byte character.
    const bytes = Buffer.from(CLAUDE_CODE_STREAM.join(''), 'utf8');
    const pieces: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 13) pieces.push(bytes.subarray(i, i + 13));
    door.fake.enqueue('/v1/messages', { frames: pieces });
    expect((await replay()).text).toBe(CLAUDE_CODE_STREAM.join(''));
  });

  it('the turn’s usage, cache reads and writes included, is the gateway’s usage in the request log', async () => {
    door.fake.enqueue('/v1/messages', { frames: CLAUDE_CODE_STREAM });
    await replay();
    const line = door.gw.logs.findLast((l) => l.path === '/v1/messages');
    expect(line?.usage).toEqual({
      prompt_tokens: 4 + 1830 + 14020,
      completion_tokens: 112,
      total_tokens: 4 + 1830 + 14020 + 112,
      prompt_tokens_details: { cached_tokens: 14020, cache_write_tokens: 1830 },
    });
  });
});
