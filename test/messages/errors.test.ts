import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { anthropicError, messageStream, sseEvent } from '../fakes/anthropic-server.js';
import { post } from '../helpers/http.js';
import { ANTHROPIC_KEY, useDoor } from './_door.js';

/**
 * Every error on the Messages door is Anthropic's envelope with the status the SDK's exception classes
 * and retry rules read: 400, 401, 429, 412, 446 and Anthropic's 529, which the gateway's own retries,
 * fallbacks and breaker count as they count a 503.
 */
const WS_KEY = 'sk-test-messages-ws-0123456789';
const door = useDoor(() => ({}), () => `api_keys:\n  - { key: ${WS_KEY}, name: door-ws, workspace_id: ws-door, organisation_id: org-door }\n`);
const ask = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content: 'ping' }] };
const failure = <T>(p: Promise<T>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);
type ApiError = InstanceType<typeof Anthropic.APIError>;

/** A config of Anthropic targets on the fake (fallback or retry), given as x-gateway-config. */
const target = () => ({ provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: door.fake.baseUrl });
const configured = (config: unknown): Anthropic => door.sdk({ 'x-gateway-virtual-key': null, 'x-gateway-config': JSON.stringify(config) });

describe('errors on the Messages door, as the Anthropic SDK reads them', () => {
  it('a provider 429: RateLimitError, Anthropic’s type and message, its retry-after passed on', async () => {
    door.fake.enqueue('/v1/messages', anthropicError(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', { 'retry-after': '7' }));
    const err = (await failure(door.sdk().messages.create(ask))) as ApiError;
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(err.headers?.get('retry-after')).toBe('7');
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit', code: 'rate_limit_error' } });
  });

  it('a provider 529 stays 529 with overloaded_error: the SDK’s InternalServerError (which it retries)', async () => {
    door.fake.enqueue('/v1/messages', anthropicError(529, 'overloaded_error', 'Overloaded'));
    const err = (await failure(door.sdk().messages.create(ask))) as ApiError;
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(err.status).toBe(529);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });

  it('a 529 is retried by default, like a 503', async () => {
    door.fake.enqueue('/v1/messages', anthropicError(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '1' }));
    const msg = await configured({ ...target(), retry: { attempts: 1, use_retry_after_headers: true } }).messages.create(ask);
    expect(msg.content).toEqual([{ type: 'text', text: 'echo: ping' }]);
    expect(door.fake.requests).toHaveLength(2);
  });

  it('a 529, as a response or as a stream’s first event, falls back to the next target', async () => {
    const config = { strategy: { mode: 'fallback' }, targets: [target(), { ...target(), override_params: { model: 'claude-haiku-4-5' } }] };
    door.fake.enqueue('/v1/messages', anthropicError(529, 'overloaded_error', 'Overloaded'));
    const msg = await configured(config).messages.create(ask);
    expect(msg.model).toBe('claude-haiku-4-5');
    door.fake.reset();
    door.fake.enqueue('/v1/messages', { frames: [sseEvent('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })] });
    door.fake.enqueue('/v1/messages', { frames: messageStream([{ text: ['from ', 'haiku'] }], { model: 'claude-haiku-4-5' }) });
    const final = await configured(config).messages.stream(ask).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'from haiku' }]);
    expect(door.fake.requests.map((r) => r.body.model)).toEqual(['claude-sonnet-4-5', 'claude-haiku-4-5']);
  });

  it('two 529s open a breaker (threshold 2): the next request is refused without an upstream call, in Anthropic’s envelope', async () => {
    // A target of its own (its custom_host differs), so no other test's breaker state is shared.
    const config = { ...target(), custom_host: `${door.fake.baseUrl}/`, cb_config: { failure_threshold: 2, cooldown_interval: 30_000 } };
    for (let i = 0; i < 2; i++) {
      door.fake.enqueue('/v1/messages', anthropicError(529, 'overloaded_error', 'Overloaded'));
      expect(((await failure(configured(config).messages.create(ask))) as ApiError).status).toBe(529);
    }
    const err = (await failure(configured(config).messages.create(ask))) as ApiError;
    expect(err.status).toBe(503);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', code: 'circuit_open' } });
    expect(door.fake.requests).toHaveLength(2);
  });

  it('a 446 from a denying guardrail: the SDK’s APIError with status 446, hook_results kept', async () => {
    const config = { ...target(), input_guardrails: [{ id: 'haiku-only', 'default.modelWhitelist': { models: ['claude-haiku-4-5'] }, deny: true }] };
    const err = (await failure(configured(config).messages.create(ask))) as ApiError;
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(446);
    expect(err.headers?.get('x-should-retry')).toBe('false');
    const body = err.error as { type: string; error: { type: string; code: string }; hook_results: { before_request_hooks: unknown[] } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'hooks_failed' } });
    expect(body.hook_results.before_request_hooks).toHaveLength(1);
    expect(door.fake.requests).toHaveLength(0);
  });

  it('a 412 from a reached usage limit: the SDK’s APIError with status 412, a rate_limit_error not to be retried', async () => {
    const caseId = randomUUID();
    const created = await post(`${door.gw.url}/v1/policies/usage-limits`, door.gw.headers(), {
      name: 'tiny', type: 'tokens', credit_limit: 1, workspace_id: 'ws-door', organisation_id: 'org-door', conditions: [{ key: 'metadata.case', value: caseId }],
    });
    expect(created.status).toBe(201);
    const client = door.sdk({ 'x-gateway-api-key': WS_KEY, 'x-gateway-metadata': JSON.stringify({ case: caseId }) });
    let err = (await failure(client.messages.create(ask))) as ApiError | undefined;
    if (err === undefined) err = (await failure(client.messages.create(ask))) as ApiError;
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(412);
    expect(err.headers?.get('x-should-retry')).toBe('false');
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });
});
