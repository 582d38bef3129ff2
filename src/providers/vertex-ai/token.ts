import { createHash } from 'node:crypto';
import { importPKCS8, SignJWT } from 'jose';
import { GatewayError } from '../../errors/gateway-error.js';
import { redactText } from '../../config/provider-fields.js';
import type { PrepareContext } from '../types.js';
import { GOOGLE_TOKEN_URI } from './descriptor.js';

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** The assertion's lifetime: Google's maximum. */
const ASSERTION_SECONDS = 3600;
/** A token is replaced this long before it expires. */
export const REFRESH_EARLY_MS = 5 * 60_000;
const PARAM = 'cloud_c_service_account_json';

/** The fields of a service account JSON this provider uses. */
export interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
  project_id?: string;
}

/** The service account's fields, checked (a 400 naming the missing one; never its value). */
export function readServiceAccount(raw: Record<string, unknown>): ServiceAccount {
  const str = (k: string): string | undefined => (typeof raw[k] === 'string' && raw[k] !== '' ? (raw[k] as string) : undefined);
  const need = (k: string): string => {
    const v = str(k);
    if (v === undefined) throw new GatewayError('invalid_config', `${PARAM}.${k} must be a non-empty string.`, { param: `${PARAM}.${k}` });
    return v;
  };
  const sa: ServiceAccount = { client_email: need('client_email'), private_key: need('private_key'), token_uri: str('token_uri') ?? GOOGLE_TOKEN_URI };
  let u: URL | undefined;
  try {
    u = new URL(sa.token_uri);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:')) {
    throw new GatewayError('invalid_config', `${PARAM}.token_uri must be an http(s) URL.`, { param: `${PARAM}.token_uri` });
  }
  const kid = str('private_key_id');
  if (kid !== undefined) sa.private_key_id = kid;
  const project = str('project_id');
  if (project !== undefined) sa.project_id = project;
  return sa;
}

interface Entry {
  token?: string;
  /** When (injected clock, ms) the token must be replaced. */
  refreshAt: number;
  /** The exchange in flight: every request that needs this account's token meanwhile waits on it. */
  pending?: Promise<string>;
  key?: ReturnType<typeof importPKCS8>;
}

/** Rejects when `signal` aborts; `p` itself carries on for the other waiters. */
function orAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new GatewayError('request_timeout', 'The token request was abandoned.'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new GatewayError('request_timeout', 'The token request was abandoned.'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * Access tokens for service accounts: one RS256 JWT-bearer exchange at the account's `token_uri`,
 * shared by every request that needs it while it runs, cached until REFRESH_EARLY_MS before expiry
 * (by the injected clock). Entries are keyed by a SHA-256 digest of the account, never by the key;
 * a failed exchange is not cached. One per provider instance (per gateway).
 */
export class TokenCache {
  private readonly entries = new Map<string, Entry>();
  /** The digest per service-account object (plans are cached, so the same object comes back). */
  private readonly digests = new WeakMap<object, string>();
  /** Exchanges sent (for tests and the log). */
  exchanges = 0;

  async token(raw: Record<string, unknown>, ctx: PrepareContext): Promise<string> {
    let digest = this.digests.get(raw);
    if (digest === undefined) {
      const sa = readServiceAccount(raw);
      digest = createHash('sha256').update(JSON.stringify([sa.client_email, sa.private_key_id, sa.private_key, sa.token_uri])).digest('hex');
      this.digests.set(raw, digest);
    }
    let entry = this.entries.get(digest);
    if (!entry) this.entries.set(digest, (entry = { refreshAt: 0 }));
    if (entry.token !== undefined && ctx.now() < entry.refreshAt) return entry.token;
    if (!entry.pending) {
      const e = entry;
      const p = this.exchange(readServiceAccount(raw), e, ctx).finally(() => {
        if (e.pending === p) e.pending = undefined;
      });
      e.pending = p;
      // A waiter that leaves does not leave the others an unhandled rejection.
      p.catch(() => undefined);
    }
    return orAbort(entry.pending!, ctx.signal);
  }

  private async exchange(sa: ServiceAccount, entry: Entry, ctx: PrepareContext): Promise<string> {
    const doFetch = ctx.fetch;
    if (!doFetch) throw new GatewayError('internal_error', 'No fetch is configured for token exchanges.');
    entry.key ??= importPKCS8(sa.private_key, 'RS256').catch(() => {
      entry.key = undefined;
      throw new GatewayError('invalid_config', `${PARAM}.private_key is not a PKCS#8 PEM RSA key.`, { param: `${PARAM}.private_key` });
    });
    const key = await entry.key;
    const startedAt = ctx.now();
    const iat = Math.floor(startedAt / 1000);
    const header: { alg: 'RS256'; typ: 'JWT'; kid?: string } = { alg: 'RS256', typ: 'JWT' };
    if (sa.private_key_id !== undefined) header.kid = sa.private_key_id;
    const assertion = await new SignJWT({ scope: SCOPE })
      .setProtectedHeader(header)
      .setIssuer(sa.client_email)
      .setAudience(sa.token_uri)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ASSERTION_SECONDS)
      .sign(key);
    this.exchanges++;
    const res = await doFetch(sa.token_uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: GRANT_TYPE, assertion }).toString(),
    });
    const text = await res.text();
    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    const origin = new URL(sa.token_uri).origin;
    if (!res.ok || typeof body?.access_token !== 'string') {
      throw refusal(res.status, body, origin, [assertion, sa.private_key, sa.client_email]);
    }
    const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : 3600_000;
    entry.token = body.access_token;
    entry.refreshAt = startedAt + Math.max(expiresIn - REFRESH_EARLY_MS, expiresIn / 2);
    return entry.token;
  }
}

/**
 * The token endpoint's refusal as the client's error: what it said (`error`, `error_description`,
 * no secret), with 401 when it refused the account, 429 kept, else 502.
 */
function refusal(status: number, body: Record<string, unknown> | undefined, origin: string, secrets: string[]): GatewayError {
  const code = typeof body?.error === 'string' ? body.error : null;
  const desc = typeof body?.error_description === 'string' ? body.error_description.slice(0, 300) : undefined;
  const said = code ? `${code}${desc ? `: ${desc}` : ''}` : `status ${status}`;
  const ok = status >= 200 && status < 300;
  const message = redactText(
    ok ? `The token endpoint ${origin} answered without an access_token.` : `The token endpoint ${origin} refused the service account (${status}): ${said}`,
    secrets,
  );
  const out = ok ? 502 : status === 429 ? 429 : status >= 400 && status < 500 ? 401 : 502;
  return new GatewayError('upstream_error', message, { status: out, upstreamCode: code, upstreamType: out === 401 ? 'authentication_error' : undefined });
}
