/**
 * callTarget: one target's attempts, over a real socket to a FakeOpenAI on 127.0.0.1. What the target
 * sends (override_params over the body, forward_headers), what the answer says about it (retry
 * number), what an error may not carry (the credential), and request_timeout.
 */
import { retry, VirtualTimeScheduler } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { callTarget, requestFor } from '../../src/pipeline/call-target.js';
import type { TargetNode } from '../../src/plan/types.js';
import { FakeOpenAI, openAIError } from '../fakes/openai-server.js';
import { answer, CHAT, CHAT_PATH, collect, context, harness, plan, PROVIDER_KEY, target, type Harness } from './_harness.js';

let fake: FakeOpenAI;
let h: Harness;

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  h = harness();
});

afterEach(() => fake.reset());

afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const targetNode = (extra: Record<string, unknown> = {}): TargetNode => plan(target(fake, extra)) as TargetNode;

describe('callTarget: what the target sends', () => {
  it('override_params win over the request body, key by key; the request body itself is not changed', async () => {
    const node = targetNode({ override_params: { model: 'gpt-4.1', temperature: 0 } });
    const body = { ...CHAT, temperature: 1, user: 'u-1' };
    const ctx = context(h.clock, { request: { body } });
    const r = answer(await collect(callTarget(node, ctx, h.deps)));
    expect(r.status).toBe(200);
    const [rec] = fake.requests;
    expect(rec!.body).toEqual({ model: 'gpt-4.1', messages: CHAT.messages, temperature: 0, user: 'u-1' });
    expect(ctx.request.body).toEqual({ ...CHAT, temperature: 1, user: 'u-1' });
    expect(requestFor(node, ctx).body).toEqual({ ...body, model: 'gpt-4.1', temperature: 0 });
  });

  it('a target without override_params or forward_headers sends the request as it came (same object)', () => {
    const ctx = context(h.clock);
    expect(requestFor(targetNode(), ctx)).toBe(ctx.request);
  });

  it('forward_headers: the named incoming headers reach the provider, no others', async () => {
    const headers = { 'x-tenant': 'acme', 'x-trace-note': 'n1', 'x-other': 'not forwarded' };
    await collect(callTarget(targetNode({ forward_headers: ['x-tenant', 'x-trace-note'] }), context(h.clock, { request: { headers } }), h.deps));
    await collect(callTarget(targetNode(), context(h.clock, { request: { headers } }), h.deps));
    const [withFwd, without] = fake.requests;
    expect(withFwd!.headers['x-tenant']).toBe('acme');
    expect(withFwd!.headers['x-trace-note']).toBe('n1');
    expect(withFwd!.headers['x-other']).toBeUndefined();
    expect(without!.headers['x-tenant']).toBeUndefined();
    expect(withFwd!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
  });
});

describe('callTarget: attempts', () => {
  it('each subscription is one attempt; the n-th resubscription answers with retries n in its meta', async () => {
    fake.enqueue(CHAT_PATH, openAIError(500, 'boom'), openAIError(500, 'boom'));
    const node = targetNode();
    const ctx = context(h.clock);
    const r = answer(await collect(callTarget(node, ctx, h.deps).pipe(retry(2))));
    expect(r.meta).toMatchObject({ provider: 'openai', target: 'config', retries: 2 });
    expect(fake.requests).toHaveLength(3);
    expect(ctx.outcome.attempts).toBe(3);
    // A new call starts counting again.
    const again = answer(await collect(callTarget(node, ctx, h.deps)));
    expect(again.meta.retries).toBe(0);
    expect(ctx.outcome.attempts).toBe(4);
  });

  it('is cold: nothing is sent until it is subscribed', async () => {
    const obs = callTarget(targetNode(), context(h.clock), h.deps);
    expect(fake.requests).toHaveLength(0);
    await collect(obs);
    expect(fake.requests).toHaveLength(1);
  });

  it('the credential a provider echoes in its error text is redacted before it becomes the error', async () => {
    fake.enqueue(CHAT_PATH, openAIError(401, `Incorrect API key provided: ${PROVIDER_KEY}. Your key ${PROVIDER_KEY} is wrong.`));
    const { error } = await collect(callTarget(targetNode(), context(h.clock), h.deps));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(401);
    expect(error.message).toContain('Incorrect API key provided: [redacted]. Your key [redacted] is wrong.');
    expect(JSON.stringify(error.toBody('t'))).not.toContain(PROVIDER_KEY);
    expect(String(error.stack)).not.toContain(PROVIDER_KEY);
  });
});

describe('callTarget: request_timeout', () => {
  it('elapses (in virtual time) while the provider has not answered: 408 request_timeout, and the upstream call is aborted', async () => {
    const scheduler = new VirtualTimeScheduler();
    const th = harness({ scheduler });
    try {
      fake.enqueue(CHAT_PATH, { hang: true });
      const outcome = collect(callTarget(targetNode({ request_timeout: 1000 }), context(th.clock), th.deps));
      const [rec] = await fake.waitForRequests(1);
      scheduler.flush(); // the 1000 ms pass now, with the request in flight
      const { error } = await outcome;
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ code: 'request_timeout', status: 408, param: 'request_timeout' });
      expect(error.message).toBe('The request timed out after 1000 ms.');
      await rec!.closed;
      expect(rec!.aborted).toBe(true);
    } finally {
      await th.close();
    }
  });

  it('an answer within request_timeout goes through and nothing fires later', async () => {
    const scheduler = new VirtualTimeScheduler();
    const th = harness({ scheduler });
    try {
      const r = answer(await collect(callTarget(targetNode({ request_timeout: 1000 }), context(th.clock), th.deps)));
      expect(r.status).toBe(200);
      expect(scheduler.actions).toHaveLength(0);
    } finally {
      await th.close();
    }
  });
});
