import { z } from 'zod';
import { parseOrThrow } from '../config/issues.js';
import { fieldError, keepScope, managementScope, NoQuery, ownerScope, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, ScopeId, storeWrite, withinScope, type Scope } from './common.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ErrorCode } from '../errors/codes.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import type { ResourceMeta, ResourcePage, ResourceRecord, ScopedResourceStore } from '../state/resource-store.js';

/** What a create or an update answers (the guardrail record; prompts answer the same). */
export interface ResourceRef {
  id: string;
  slug: string;
  version_id: string;
}

/** The scope fields a POST or PUT body may carry (where the resource lives). */
export const SCOPE_FIELDS = { workspace_id: ScopeId.optional(), organisation_id: ScopeId.optional() };

const count = z
  .string()
  .regex(/^\d{1,9}$/, 'must be a non-negative integer')
  .transform(Number);

export const ListQuerySchema = z.strictObject({
  ...SCOPE_FIELDS,
  page_size: count.pipe(z.number().max(PAGE_SIZE_MAX, `at most ${PAGE_SIZE_MAX}`)).default(PAGE_SIZE_DEFAULT),
  current_page: count.default(0),
});

export const GetQuerySchema = z.strictObject({ version_id: z.string().min(1, 'must not be empty').optional() });

const ref = (r: ResourceMeta): ResourceRef => ({ id: r.id, slug: r.slug, version_id: r.version_id });

/** A kind's API: its name, its not-found code, and how a POST or PUT body becomes a version's content. */
export interface ResourceApi<C extends { name: string }> {
  /** `guardrail`, `prompt`: in messages and the delete answer's `object`. */
  readonly label: string;
  readonly notFound: ErrorCode;
  /** Validates a body (zod, then the kind's own checks): its content and the scope it names; a 400 naming the field. */
  parse(body: unknown): { content: C; scope: Scope };
}

/**
 * A versioned, scoped resource's API logic (guardrails, prompts), over the store port: validation,
 * scoping by the caller's gateway key, and the answers. No HTTP types: the route hands in the parsed
 * body and query and the key's record, and turns the result into JSON.
 *
 * Scoping (common.ts `managementScope`): a workspace key creates in its workspace, and sees, updates
 * and deletes only its resources; another workspace's resource is answered as unknown (404), so a key
 * cannot learn that it exists, and naming another workspace is a 403. An admin key names the scope in
 * the body and sees every workspace (of its organisation, when bound to one).
 */
export class ResourceService<C extends { name: string }> {
  constructor(
    protected readonly store: ScopedResourceStore<C>,
    private readonly api: ResourceApi<C>,
  ) {}

  async create(body: unknown, key: ApiKeyRecord | undefined): Promise<ResourceRef> {
    const caller = managementScope(key);
    const { content, scope } = this.api.parse(body);
    const owner = ownerScope(scope, caller);
    return ref(await storeWrite(() => this.store.create({ ...content, ...owner })));
  }

  async list(query: unknown, key: ApiKeyRecord | undefined): Promise<ResourcePage<ResourceRecord<C>>> {
    const scope = managementScope(key);
    const q = parseOrThrow(ListQuerySchema, query, 'invalid_query_parameter', 'query');
    withinScope(q, scope);
    return this.store.list(scope, q);
  }

  async get(idOrSlug: string, query: unknown, key: ApiKeyRecord | undefined): Promise<ResourceRecord<C>> {
    const scope = managementScope(key);
    const q = parseOrThrow(GetQuerySchema, query, 'invalid_query_parameter', 'query');
    const r = await this.store.get(idOrSlug, scope, q.version_id);
    if (r) return r;
    throw this.notFound(idOrSlug, q.version_id !== undefined && (await this.store.get(idOrSlug, scope)) ? q.version_id : undefined);
  }

  /** PUT: the whole resource again; a new version, the old ones kept. */
  async update(idOrSlug: string, body: unknown, query: unknown, key: ApiKeyRecord | undefined): Promise<ResourceRef> {
    const scope = managementScope(key);
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const { content, scope: named } = this.api.parse(body);
    withinScope(named, scope);
    const current = await this.store.get(idOrSlug, scope);
    if (!current) throw this.notFound(idOrSlug);
    keepScope(named, current, `a ${this.api.label}`);
    const r = await storeWrite(() => this.store.update(current.id, scope, content));
    if (!r) throw this.notFound(idOrSlug);
    return ref(r);
  }

  async delete(idOrSlug: string, query: unknown, key: ApiKeyRecord | undefined): Promise<ResourceRef & { object: string; deleted: true }> {
    const scope = managementScope(key);
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const r = await storeWrite(() => this.store.delete(idOrSlug, scope));
    if (!r) throw this.notFound(idOrSlug);
    return { ...ref(r), object: this.api.label, deleted: true };
  }

  private notFound(idOrSlug: string, versionId?: string): GatewayError {
    const label = this.api.label;
    return versionId === undefined
      ? new GatewayError(this.api.notFound, `No ${label} has the id or slug "${idOrSlug}".`)
      : new GatewayError(this.api.notFound, `The ${label} "${idOrSlug}" has no version "${versionId}".`, { param: 'version_id' });
  }
}
