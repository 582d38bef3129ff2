/**
 * Service-account tokens for vertex-ai against the fake token endpoint (which verifies the RS256
 * assertion with the account's public key): one exchange shared by concurrent callers, refreshed 5 min
 * before expiry by the injected clock, failures not cached and free of secrets; and the egress fetch
 * that carries the exchange (the host guard for a token_uri that is not Google's).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { REFRESH_EARLY_MS, TokenCache } from '../../src/providers/vertex-ai/token.js';
import type { PrepareContext } from '../../src/providers/types.js';
import { createEgress, type Egress } from '../../src/security/egress.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { FakeClock } from '../helpers/clock.js';
import { FakeVertex } from '../fakes/vertex-server.js';

const clock = new FakeClock();
let fake: FakeVertex;
const trustLoopback = new HostGuard({ trusted: ['127.0.0.1'] });
const egresses: Egress[] = [];
function egress(guard: HostGuard): typeof fetch {
  const e = createEgress(guard, {}, 'cloud_c_service_account_json.token_uri');
  egresses.push(e);
  return e.fetch;
}
let ctx: PrepareContext;

beforeAll(async () => {
  fake = await FakeVertex.start(clock.now);
  ctx = { now: clock.now, signal: new AbortController().signal, fetch: egress(trustLoopback) };
});
afterAll(async () => {
  await Promise.all(egresses.map((e) => e.close()));
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  fake.exchanges = 0;
});

describe('vertex-ai service-account tokens', () => {
  it('five concurrent callers share one exchange; the fake verified the assertion', async () => {
    const cache = new TokenCache();
    const sa = fake.serviceAccount();
    const tokens = await Promise.all([1, 2, 3, 4, 5].map(() => cache.token(sa, ctx)));
    expect(fake.exchanges).toBe(1);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).toMatch(/^ya29\.fake-/);
    const form = fake.requests[0]!.body;
    expect(form.grant_type).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const claims = JSON.parse(Buffer.from(form.assertion.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ iss: sa.client_email, aud: sa.token_uri, iat: Math.floor(clock.t / 1000), exp: Math.floor(clock.t / 1000) + 3600 });
  });

  it('is cached until 5 minutes before expiry by the injected clock, then refreshed once', async () => {
    const cache = new TokenCache();
    const sa = fake.serviceAccount();
    const first = await cache.token(sa, ctx);
    // An equal account in another object (another plan) finds the same entry: the key is a digest.
    expect(await cache.token({ ...sa }, ctx)).toBe(first);
    clock.advance(3599_000 - REFRESH_EARLY_MS - 1);
    expect(await cache.token(sa, ctx)).toBe(first);
    expect(fake.exchanges).toBe(1);
    clock.advance(1);
    const [a, b] = await Promise.all([cache.token(sa, ctx), cache.token(sa, ctx)]);
    expect(a).not.toBe(first);
    expect(b).toBe(a);
    expect(fake.exchanges).toBe(2);
  });

  it('a refused exchange is an error naming the endpoint\'s answer, without a secret, and is not cached', async () => {
    const cache = new TokenCache();
    const sa = fake.serviceAccount({ client_email: 'someone-else@sa-project.iam.gserviceaccount.com' });
    const err = await cache.token(sa, ctx).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GatewayError);
    const e = err as GatewayError;
    expect([e.status, e.upstreamCode]).toEqual([401, 'invalid_grant']);
    expect(e.message).toContain('Invalid JWT: iss');
    expect(e.message).toContain(fake.baseUrl);
    expect(e.message).not.toContain('PRIVATE KEY');
    expect(e.message).not.toContain('someone-else');
    // Not cached: the next call exchanges again (and this time the endpoint answers 200).
    fake.enqueueToken({ json: { access_token: 'ya29.after-failure', expires_in: 3599, token_type: 'Bearer' } });
    expect(await cache.token(sa, ctx)).toBe('ya29.after-failure');
    expect(fake.exchanges).toBe(2);
  });

  it('a service account without client_email or with a bad key is a 400 naming the field', async () => {
    const cache = new TokenCache();
    const noEmail = await cache.token({ private_key: 'x' }, ctx).catch((e: GatewayError) => e);
    expect([(noEmail as GatewayError).status, (noEmail as GatewayError).param]).toEqual([400, 'cloud_c_service_account_json.client_email']);
    const badKey = await cache.token(fake.serviceAccount({ private_key: 'not a pem' }), ctx).catch((e: GatewayError) => e);
    expect([(badKey as GatewayError).status, (badKey as GatewayError).param]).toEqual([400, 'cloud_c_service_account_json.private_key']);
    expect(fake.exchanges).toBe(0);
  });

  it('a caller that leaves does not cancel the shared exchange for the others', async () => {
    const cache = new TokenCache();
    const sa = fake.serviceAccount();
    const ac = new AbortController();
    const leaving = cache.token(sa, { ...ctx, signal: ac.signal });
    const staying = cache.token(sa, ctx);
    ac.abort();
    await expect(leaving).rejects.toBeInstanceOf(GatewayError);
    expect(await staying).toMatch(/^ya29\.fake-/);
    expect(fake.exchanges).toBe(1);
  });
});

describe('egress fetch for token endpoints', () => {
  it('refuses a loopback token_uri the operator does not trust, before any exchange', async () => {
    const cache = new TokenCache();
    const untrusting = { ...ctx, fetch: egress(new HostGuard({ trusted: [] })) };
    const e = (await cache.token(fake.serviceAccount(), untrusting).catch((x: unknown) => x)) as GatewayError;
    expect(e.code).toBe('custom_host_not_allowed');
    expect(e.param).toBe('cloud_c_service_account_json.token_uri');
    expect(e.message).toContain('127.0.0.1 is a loopback address');
    expect(fake.exchanges).toBe(0);
  });
});
