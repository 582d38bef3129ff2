import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { parseOrThrow } from '../config/issues.js';
import { GatewayError } from '../errors/gateway-error.js';
import { API_KEY_SCOPES, generateApiKey, keyHint, type ApiKeyRecord } from '../security/api-keys.js';
import type { ApiKeyStore, MadeKeyRecord } from '../state/api-key-store.js';
import { visibleTo } from '../security/tenancy.js';
import { adminScope, NoQuery, ownerScope, ScopeId, scopedPage, storeWrite, withinScope, type Page } from './common.js';
import { ListQuerySchema } from './resources.js';

/** The body of POST /v1/api-keys. */
export const ApiKeyBodySchema = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(128, 'at most 128 characters'),
  workspace_id: ScopeId.optional(),
  organisation_id: ScopeId.optional(),
  scopes: z.array(z.enum(API_KEY_SCOPES)).max(API_KEY_SCOPES.length * 4, 'too many entries').default([]),
});

/** A key as the API shows it: never the key. */
export interface ApiKeyView {
  id: string;
  object: 'api_key';
  name: string;
  workspace_id: string | null;
  organisation_id: string | null;
  scopes: string[];
  created_at: string;
  /** `sk-sluice-…AbCd`: the last 4 characters, to tell keys apart. */
  hint: string | null;
}

function view(r: MadeKeyRecord): ApiKeyView {
  return {
    id: r.id,
    object: 'api_key',
    name: r.name,
    workspace_id: r.workspace_id ?? null,
    organisation_id: r.organisation_id ?? null,
    scopes: [...(r.scopes ?? [])],
    created_at: r.created_at,
    hint: r.hint ?? null,
  };
}

function notFound(id: string): GatewayError {
  return new GatewayError('api_key_not_found', `No gateway key made through this API has the id "${id}" (in the scope of this gateway key).`);
}

/**
 * The admin API for gateway keys (`/v1/api-keys`), over the key store: admin keys only (403
 * otherwise). A key is generated here (192 random bits), answered once, and stored only as its
 * SHA-256 digest; its id is a random UUID, unrelated to the key. An admin key bound to an
 * organisation makes, sees and revokes only that organisation's keys (what it makes is bound to it,
 * so it cannot make a key above itself). Keys declared by the operator (`GATEWAY_API_KEYS`, the
 * bootstrap file) are configuration: not listed here, not revocable here.
 */
export class ApiKeysService {
  constructor(
    private readonly store: ApiKeyStore,
    private readonly now: () => number = Date.now,
  ) {}

  async create(body: unknown, key: ApiKeyRecord | undefined): Promise<ApiKeyView & { key: string }> {
    const scope = adminScope(key);
    const b = parseOrThrow(ApiKeyBodySchema, body, 'invalid_request_body', 'request body');
    withinScope(b, scope);
    const owner = scope.organisation_id === undefined && b.workspace_id === undefined && b.organisation_id === undefined ? {} : ownerScope(b, scope);
    const secret = generateApiKey();
    const record: MadeKeyRecord = { id: randomUUID(), name: b.name, ...owner, created_at: new Date(this.now()).toISOString(), hint: keyHint(secret) };
    if (b.scopes.length > 0) record.scopes = [...new Set(b.scopes)];
    // A generated key cannot already be stored (192 random bits); a false here is a broken generator.
    if (!(await storeWrite(() => this.store.add(secret, record)))) throw new Error('a generated gateway key was already stored');
    return { ...view(record), key: secret };
  }

  async list(query: unknown, key: ApiKeyRecord | undefined): Promise<Page<ApiKeyView>> {
    const scope = adminScope(key);
    const q = parseOrThrow(ListQuerySchema, query, 'invalid_query_parameter', 'query');
    withinScope(q, scope);
    return scopedPage(this.store.list(), scope, q, view);
  }

  async get(id: string, query: unknown, key: ApiKeyRecord | undefined): Promise<ApiKeyView> {
    const scope = adminScope(key);
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const r = this.store.get(id);
    if (!r || !visibleTo(r, scope)) throw notFound(id);
    return view(r);
  }

  /** Revokes: the next request with the key is a 401 (on every instance, once its mirror has the change). */
  async delete(id: string, query: unknown, key: ApiKeyRecord | undefined): Promise<{ id: string; object: 'api_key'; deleted: true }> {
    const scope = adminScope(key);
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const r = this.store.get(id);
    if (!r || !visibleTo(r, scope)) throw notFound(id);
    if (!(await storeWrite(() => this.store.revoke(id)))) throw notFound(id);
    return { id, object: 'api_key', deleted: true };
  }
}
