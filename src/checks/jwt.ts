import { errors as joseErrors, jwtVerify } from 'jose';
import { z } from 'zod';
import { httpUrl, nonNegInt } from './params.js';
import type { CheckDef } from './types.js';

/** Asymmetric algorithms only: a JWKS publishes public keys, and HS* would need a shared secret. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;

/** jose's duration syntax: "30s", "15 minutes", "2h", "1d", "1w", "1y". */
const DURATION = /^\d+(?:\.\d+)?\s*(?:s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|w|week|weeks|y|yr|yrs|year|years)$/i;

const Params = z.strictObject({
  jwksUri: httpUrl,
  /** The request header holding the token (`Bearer ` prefix optional). */
  headerKey: z.string().min(1).default('Authorization'),
  algorithms: z.array(z.enum(ALGORITHMS)).min(1).default(['RS256']),
  /** Seconds a fetched JWKS is used. */
  cacheMaxAge: nonNegInt.default(86_400),
  /** Seconds of clock skew allowed on exp / nbf / iat. */
  clockTolerance: nonNegInt.default(5),
  /** Oldest `iat` accepted, e.g. "1d"; a number is seconds. */
  maxTokenAge: z.union([z.string().regex(DURATION, 'a duration such as "30m", "12h" or "1d"'), z.number().int().positive()]).default('1d'),
});
type Params = z.infer<typeof Params>;

/**
 * Passes when the request carries a JWT in `headerKey` that verifies against the keys published at
 * `jwksUri` (fetched through the host guard, cached per URI for `cacheMaxAge` seconds), with one of
 * `algorithms`, not expired and not issued more than `maxTokenAge` ago (both with `clockTolerance`).
 * A missing or bad token fails with the reason in `data`; a JWKS that cannot be fetched throws (an
 * error, so the check fails closed). The token itself is never in `data`.
 */
export const jwt: CheckDef<Params> = {
  io: true,
  id: 'jwt',
  params: Params,
  phases: ['request'],
  async run(input, p, deps) {
    const raw = input.headers[p.headerKey.toLowerCase()];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (!value) return { verdict: false, data: { reason: 'missing', explanation: `no ${p.headerKey} header` } };
    const token = value.replace(/^Bearer\s+/i, '').trim();
    const get = (refresh: boolean) =>
      deps.jwks.get(p.jwksUri, { http: deps.http, now: deps.now, maxAgeMs: p.cacheMaxAge * 1000, refresh });
    const verify = async (refresh: boolean) =>
      jwtVerify(token, (await get(refresh)).keys, {
        algorithms: [...p.algorithms],
        clockTolerance: p.clockTolerance,
        maxTokenAge: p.maxTokenAge,
        currentDate: new Date(deps.now()),
      });
    try {
      try {
        await verify(false);
      } catch (e) {
        // Keys rotate: a kid not in the cached set may be in a fresh one.
        if (!(e instanceof joseErrors.JWKSNoMatchingKey)) throw e;
        await verify(true);
      }
      return { verdict: true, data: { explanation: 'JWT verified' } };
    } catch (e) {
      if (e instanceof joseErrors.JOSEError) return { verdict: false, data: { reason: e.code, explanation: e.message } };
      throw e;
    }
  },
};
