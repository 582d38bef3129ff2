/**
 * JWKS documents for the jwt check, fetched through the guarded client and cached per jwksUri for
 * the check's `cacheMaxAge`. Concurrent misses share one fetch. A token whose `kid` is not in the
 * cached set may refetch the set (keys rotate), at most once per MIN_REFRESH_MS per URI, so tokens
 * with made-up kids cannot turn the gateway into a JWKS hammer.
 */
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { CheckHttp } from './http.js';

export const MIN_REFRESH_MS = 30_000;
const MAX_ENTRIES = 256;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 256 * 1024;

interface Entry {
  fetchedAt: number;
  keys: JWTVerifyGetKey;
}

export interface JwksGetOptions {
  http: CheckHttp;
  now: () => number;
  /** How long a fetched set is used (ms). */
  maxAgeMs: number;
  /** The cached set lacked the token's key: refetch unless it was fetched very recently. */
  refresh?: boolean;
}

export class JwksCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Entry>>();

  /** The key set of `uri`: cached, or fetched (throws when it cannot be fetched or read). */
  async get(uri: string, o: JwksGetOptions): Promise<{ keys: JWTVerifyGetKey; fetchedAt: number }> {
    const now = o.now();
    const hit = this.entries.get(uri);
    if (hit && now - hit.fetchedAt < o.maxAgeMs && !(o.refresh && now - hit.fetchedAt >= MIN_REFRESH_MS)) return hit;
    let p = this.inflight.get(uri);
    if (!p) {
      p = this.fetch(uri, o).finally(() => this.inflight.delete(uri));
      this.inflight.set(uri, p);
    }
    return p;
  }

  private async fetch(uri: string, o: JwksGetOptions): Promise<Entry> {
    const res = await o.http.request(uri, {
      method: 'GET',
      headers: { accept: 'application/json' },
      // Shared by every caller waiting on it: bounded by its own limit, not one caller's signal.
      timeoutMs: FETCH_TIMEOUT_MS,
      maxBytes: MAX_JWKS_BYTES,
    });
    if (res.status !== 200) throw new Error(`JWKS ${new URL(uri).host} answered ${res.status}`);
    let doc: JSONWebKeySet;
    try {
      doc = JSON.parse(res.text) as JSONWebKeySet;
    } catch {
      throw new Error(`JWKS ${new URL(uri).host} is not JSON`);
    }
    if (doc === null || typeof doc !== 'object' || !Array.isArray(doc.keys)) throw new Error(`JWKS ${new URL(uri).host} has no keys array`);
    const entry = { fetchedAt: o.now(), keys: createLocalJWKSet(doc) };
    if (this.entries.size >= MAX_ENTRIES && !this.entries.has(uri)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(uri, entry);
    return entry;
  }
}
