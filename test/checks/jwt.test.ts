import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckHttp } from '../../src/checks/http.js';
import { JwksCache, MIN_REFRESH_MS } from '../../src/checks/jwks.js';
import type { CheckDeps } from '../../src/checks/types.js';
import { HostGuard } from '../../src/security/host-guard.js';
import { chatRequest, deps, expectInvalid, json, localServer, run } from './_helpers.js';

const T0 = Date.UTC(2026, 0, 1);
const sec = (ms: number) => Math.floor(ms / 1000);

describe('jwt', () => {
  let idp: Awaited<ReturnType<typeof localServer>>;
  let rsa: { privateKey: CryptoKey; publicKey: CryptoKey };
  let other: { privateKey: CryptoKey; publicKey: CryptoKey };
  let ec: { privateKey: CryptoKey; publicKey: CryptoKey };
  let published: JWK[] = [];
  const http = createCheckHttp(new HostGuard({ trusted: ['127.0.0.1'] }));
  let now = T0;
  let d: CheckDeps;

  beforeAll(async () => {
    rsa = await generateKeyPair('RS256');
    other = await generateKeyPair('RS256');
    ec = await generateKeyPair('ES256');
    published = [
      { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', use: 'sig' },
      { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', use: 'sig' },
    ];
    idp = await localServer((r, res) => (r.url === '/jwks' ? json(res, 200, { keys: published }) : json(res, 404, {})));
  });
  afterAll(async () => {
    await Promise.all([idp.close(), http.close()]);
  });

  const fresh = () => {
    now = T0;
    idp.received.length = 0;
    d = deps({ http, now: () => now, jwks: new JwksCache() });
  };

  async function token(o: { key?: CryptoKey; alg?: string; kid?: string; iat?: number; exp?: number } = {}): Promise<string> {
    const jwt = new SignJWT({ sub: 'user-1' })
      .setProtectedHeader({ alg: o.alg ?? 'RS256', kid: o.kid ?? 'rsa-1' })
      .setIssuedAt(o.iat ?? sec(now))
      .setExpirationTime(o.exp ?? sec(now) + 600);
    return jwt.sign(o.key ?? rsa.privateKey);
  }

  const params = (over: Record<string, unknown> = {}) => ({ jwksUri: `${idp.url}/jwks`, headerKey: 'x-user-token', ...over });
  const withToken = (t: string, header = 'x-user-token') => chatRequest('hi', { headers: { [header]: `Bearer ${t}` } });

  it('a valid token passes; the token is never in data', async () => {
    fresh();
    const t = await token();
    const out = await run('jwt', params(), withToken(t), d);
    expect(out.verdict).toBe(true);
    expect(JSON.stringify(out.data)).not.toContain(t.split('.')[1]!);
  });

  it('no token in the header fails (not an error); headerKey defaults to Authorization', async () => {
    fresh();
    expect(await run('jwt', params(), chatRequest('hi'), d)).toMatchObject({ verdict: false, data: { reason: 'missing' } });
    expect((await run('jwt', { jwksUri: `${idp.url}/jwks` }, withToken(await token(), 'authorization'), d)).verdict).toBe(true);
  });

  it('an expired token fails; clockTolerance forgives a few seconds', async () => {
    fresh();
    const t = await token({ iat: sec(now) - 100, exp: sec(now) - 3 });
    expect(await run('jwt', params({ clockTolerance: 0 }), withToken(t), d)).toMatchObject({ verdict: false, data: { reason: 'ERR_JWT_EXPIRED' } });
    expect((await run('jwt', params({ clockTolerance: 5 }), withToken(t), d)).verdict).toBe(true);
  });

  it('maxTokenAge refuses a token issued too long ago', async () => {
    fresh();
    const t = await token({ iat: sec(now) - 7200, exp: sec(now) + 600 });
    expect((await run('jwt', params({ maxTokenAge: '1h' }), withToken(t), d)).verdict).toBe(false);
    expect((await run('jwt', params({ maxTokenAge: '3h' }), withToken(t), d)).verdict).toBe(true);
  });

  it('an algorithm outside `algorithms` fails, even with a published key', async () => {
    fresh();
    const t = await token({ key: ec.privateKey, alg: 'ES256', kid: 'ec-1' });
    expect(await run('jwt', params({ algorithms: ['RS256'] }), withToken(t), d)).toMatchObject({ verdict: false, data: { reason: 'ERR_JOSE_ALG_NOT_ALLOWED' } });
    expect((await run('jwt', params({ algorithms: ['RS256', 'ES256'] }), withToken(t), d)).verdict).toBe(true);
  });

  it('a token signed by another key under a published kid fails; garbage fails', async () => {
    fresh();
    const forged = await token({ key: other.privateKey });
    expect(await run('jwt', params(), withToken(forged), d)).toMatchObject({ verdict: false, data: { reason: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' } });
    expect((await run('jwt', params(), withToken('not.a.jwt'), d)).verdict).toBe(false);
  });

  it('the JWKS is fetched once and cached for cacheMaxAge seconds', async () => {
    fresh();
    const p = params({ cacheMaxAge: 60 });
    for (let i = 0; i < 3; i++) expect((await run('jwt', p, withToken(await token()), d)).verdict).toBe(true);
    expect(idp.received).toHaveLength(1);
    now += 59_000;
    await run('jwt', p, withToken(await token()), d);
    expect(idp.received).toHaveLength(1);
    now += 2_000;
    await run('jwt', p, withToken(await token()), d);
    expect(idp.received).toHaveLength(2);
  });

  it('an unknown kid refetches the set (rotation), at most once per MIN_REFRESH_MS', async () => {
    fresh();
    await run('jwt', params(), withToken(await token()), d);
    expect(idp.received).toHaveLength(1);
    const rotated = await generateKeyPair('RS256');
    const t = await token({ key: rotated.privateKey, kid: 'rsa-2' });
    // Fetched just now: no refetch yet, the unknown kid fails.
    expect(await run('jwt', params(), withToken(t), d)).toMatchObject({ verdict: false, data: { reason: 'ERR_JWKS_NO_MATCHING_KEY' } });
    expect(idp.received).toHaveLength(1);
    published = [...published, { ...(await exportJWK(rotated.publicKey)), kid: 'rsa-2' }];
    now += MIN_REFRESH_MS;
    expect((await run('jwt', params(), withToken(await token({ key: rotated.privateKey, kid: 'rsa-2' })), d)).verdict).toBe(true);
    expect(idp.received).toHaveLength(2);
  });

  it('a JWKS that cannot be fetched is an error (fail closed), not a verdict', async () => {
    fresh();
    await expect(run('jwt', params({ jwksUri: `${idp.url}/missing` }), withToken(await token()), d)).rejects.toThrow(/answered 404/);
    const refused = deps({ http: createCheckHttp(new HostGuard({ trusted: [] })), jwks: new JwksCache() });
    await expect(run('jwt', params(), withToken(await token()), refused)).rejects.toThrow(/not allowed/);
  });

  it('refuses bad parameters', () => {
    expectInvalid('jwt', {}, 'jwksUri');
    expectInvalid('jwt', { jwksUri: 'file:///etc/passwd' }, 'jwksUri');
    expectInvalid('jwt', { jwksUri: 'https://x/j', algorithms: ['HS256'] }, 'algorithms.0');
    expectInvalid('jwt', { jwksUri: 'https://x/j', maxTokenAge: 'forever' }, 'maxTokenAge');
    expectInvalid('jwt', { jwksUri: 'https://x/j', cacheMaxAge: -1 }, 'cacheMaxAge');
    expectInvalid('jwt', { jwksUri: 'https://x/j', clockTolerance: 'x' }, 'clockTolerance');
  });
});
