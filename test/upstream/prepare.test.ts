import { lastValueFrom, Subject, switchMap, toArray } from 'rxjs';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { OPENAI_COMPATIBLE } from '../../src/providers/openai-compatible/descriptors.js';
import { fromOpenAIError } from '../../src/providers/openai-compatible/from-provider.js';
import { openAICompatible } from '../../src/providers/openai-compatible/index.js';
import type { PrepareContext, Provider, ProviderRequest, Target, UpstreamRequest } from '../../src/providers/types.js';
import { callUpstream } from '../../src/upstream/call.js';
import { prepareRequest } from '../../src/upstream/prepare.js';
import { chatCompletion, FakeOpenAI } from '../fakes/openai-server.js';

const base = openAICompatible(OPENAI_COMPATIBLE[0]!) as Provider;
const target: Target = { provider: 'openai', api_key: 'sk-test' };
const req: ProviderRequest = { endpoint: 'chat', body: { model: 'm', messages: [] }, stream: false, headers: {} };

/** A provider whose prepare signs with the clock it is given (as SigV4 would). */
const signing: Provider = {
  ...base,
  prepare: async (up, _t, ctx) => ({ ...up, headers: { ...up.headers, 'x-signed-at': String(ctx.now()) } }),
};

describe('prepareRequest', () => {
  it('is absent for a provider without the step (OpenAI-compatible: the request is sent as built)', () => {
    const up = base.toProvider(req, target, 'https://api.openai.com/v1');
    expect(base.prepare).toBeUndefined();
    expect(prepareRequest(base, up, target, { now: () => 0 })).toBeUndefined();
  });

  it('emits the prepared request, made with the clock passed in', async () => {
    const up = base.toProvider(req, target, 'https://api.openai.com/v1');
    const out = await lastValueFrom(prepareRequest(signing, up, target, { now: () => 1_700_000_000_000 })!);
    expect(out.headers['x-signed-at']).toBe('1700000000000');
    expect(out.path).toBe(up.path);
  });

  it('aborts the step\'s signal when unsubscribed before it settles, and not after', async () => {
    const started = new Subject<PrepareContext>();
    let release!: () => void;
    const pending: Provider = {
      ...base,
      prepare: (up, _t, ctx) => {
        started.next(ctx);
        return new Promise<UpstreamRequest>((resolve) => (release = () => resolve(up)));
      },
    };
    const up = base.toProvider(req, target, 'https://api.openai.com/v1');
    const seen: PrepareContext[] = [];
    started.subscribe((c) => seen.push(c));

    const sub = prepareRequest(pending, up, target, { now: () => 0 })!.subscribe();
    expect(seen[0]!.signal.aborted).toBe(false);
    sub.unsubscribe();
    expect(seen[0]!.signal.aborted).toBe(true);

    const done = lastValueFrom(prepareRequest(pending, up, target, { now: () => 0 })!);
    release();
    await done;
    expect(seen[1]!.signal.aborted).toBe(false);
  });

  it('a failed step fails the attempt with its error', async () => {
    const failing: Provider = { ...base, prepare: async () => Promise.reject(new GatewayError('upstream_unreachable', 'token endpoint down')) };
    const up = base.toProvider(req, target, 'https://api.openai.com/v1');
    await expect(lastValueFrom(prepareRequest(failing, up, target, { now: () => 0 })!)).rejects.toMatchObject({ code: 'upstream_unreachable' });
  });
});

describe('prepare between toProvider and the call', () => {
  let fake: FakeOpenAI;
  let agent: Agent;
  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    agent = new Agent({ keepAliveTimeout: 1000 });
  });
  afterAll(async () => {
    await agent?.close();
    await fake?.close();
  });

  it('the provider receives the request as prepared', async () => {
    fake.enqueue('/v1/chat/completions', { json: chatCompletion('ok') });
    const up = signing.toProvider(req, { ...target, custom_host: fake.baseUrl }, fake.baseUrl);
    const msgs = await lastValueFrom(
      prepareRequest(signing, up, target, { now: () => 42 })!.pipe(
        switchMap((u) => callUpstream(agent, u, fromOpenAIError)),
        toArray(),
      ),
    );
    expect(msgs[0]!.type).toBe('body');
    const [recorded] = await fake.waitForRequests(1);
    expect(recorded!.headers['x-signed-at']).toBe('42');
    expect(recorded!.headers.authorization).toBe('Bearer sk-test');
  });
});
