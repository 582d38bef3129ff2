import { z } from 'zod';
import { parseOrThrow } from '../config/issues.js';
import { fieldError, managementScope, NoQuery, ownerScope, ScopeId, storeWrite, withinScope } from './common.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { GuardrailLookup } from '../plan/build-plan.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import type { GuardrailCheck, GuardrailPage, GuardrailRecord, GuardrailStore } from '../state/guardrail-store.js';

/**
 * Validates a guardrail's checks as configs do (the check library's validator, handed in by the
 * composition root): throws a 400 GatewayError naming the path (e.g. `checks[1].id`) for an unknown
 * check id or bad parameters.
 */
export type ValidateChecks = (checks: readonly GuardrailCheck[], path: string) => void;

/**
 * A ValidateChecks from the check library's `resolveCheck(id, parameters, path)`: each check's
 * parameters are validated at `checks[i].parameters` (the library names the path in its 400).
 */
export function checksValidator(resolve: (id: string, parameters: unknown, path: readonly (string | number)[]) => unknown): ValidateChecks {
  return (checks, path) => checks.forEach((c, i) => resolve(c.id, c.parameters, [path, i, 'parameters']));
}

/** Used until the composition root is given the check library: no check id is known, so nothing passes. */
export const noChecksKnown: ValidateChecks = (checks, path) => {
  const where = `${path}[0].id`;
  throw new GatewayError('invalid_config', `${where}: unknown check id "${checks[0]?.id}": this build has no check library.`, {
    param: where,
    issues: [{ path: [path, 0, 'id'], message: 'unknown check id' }],
  });
};

/** What a create or an update answers (spec §Guardrail record). */
export interface GuardrailRef {
  id: string;
  slug: string;
  version_id: string;
}

export const PAGE_SIZE_DEFAULT = 50;
export const PAGE_SIZE_MAX = 100;


const CheckSchema = z.strictObject({
  id: z.string().min(1, 'a check id must not be empty'),
  parameters: z.record(z.string(), z.unknown()).default({}),
});

const ActionsSchema = z.strictObject({
  onFail: z.enum(['block', 'log']).optional(),
  message: z.string().max(2000, 'at most 2000 characters').optional(),
});

/** The body of POST and PUT /v1/guardrails (spec §POST /v1/guardrails). */
export const GuardrailBodySchema = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(256, 'at most 256 characters'),
  checks: z.array(CheckSchema).min(1, 'at least one check'),
  actions: ActionsSchema,
  workspace_id: ScopeId.optional(),
  organisation_id: ScopeId.optional(),
});
export type GuardrailBody = z.infer<typeof GuardrailBodySchema>;

const count = z
  .string()
  .regex(/^\d{1,9}$/, 'must be a non-negative integer')
  .transform(Number);

export const ListQuerySchema = z.strictObject({
  workspace_id: ScopeId.optional(),
  organisation_id: ScopeId.optional(),
  page_size: count.pipe(z.number().max(PAGE_SIZE_MAX, `at most ${PAGE_SIZE_MAX}`)).default(PAGE_SIZE_DEFAULT),
  current_page: count.default(0),
});

export const GetQuerySchema = z.strictObject({ version_id: z.string().min(1, 'must not be empty').optional() });


const ref = (r: GuardrailRecord): GuardrailRef => ({ id: r.id, slug: r.slug, version_id: r.version_id });

function notFound(idOrSlug: string, versionId?: string): GatewayError {
  return versionId === undefined
    ? new GatewayError('guardrail_not_found', `No guardrail has the id or slug "${idOrSlug}".`)
    : new GatewayError('guardrail_not_found', `The guardrail "${idOrSlug}" has no version "${versionId}".`, { param: 'version_id' });
}

/**
 * The guardrails API's logic, over the store port: validation (zod, then the checks through the
 * check library), scoping by the caller's gateway key, and the answers. No HTTP types: the route
 * hands in the parsed body and query and the key's record, and turns the result into JSON.
 *
 * Scoping (common.ts `managementScope`): a workspace key creates in its workspace, and sees, updates
 * and deletes only its guardrails; another workspace's guardrail is answered as unknown (404), so a
 * key cannot learn that it exists, and naming another workspace is a 403. An admin key names the
 * scope in the body and sees every workspace (of its organisation, when bound to one).
 */
export class GuardrailsService {
  constructor(
    private readonly store: GuardrailStore,
    private readonly validateChecks: ValidateChecks,
  ) {}

  async create(body: unknown, key: ApiKeyRecord | undefined): Promise<GuardrailRef> {
    const scope = managementScope(key);
    const b = this.parseBody(body);
    const owner = ownerScope(b, scope);
    return ref(await storeWrite(() => this.store.create({ name: b.name, checks: b.checks, actions: b.actions, ...owner })));
  }

  async list(query: unknown, key: ApiKeyRecord | undefined): Promise<GuardrailPage> {
    const scope = managementScope(key);
    const q = parseOrThrow(ListQuerySchema, query, 'invalid_query_parameter', 'query');
    withinScope(q, scope);
    return this.store.list(scope, q);
  }

  async get(idOrSlug: string, query: unknown, key: ApiKeyRecord | undefined): Promise<GuardrailRecord> {
    const scope = managementScope(key);
    const q = parseOrThrow(GetQuerySchema, query, 'invalid_query_parameter', 'query');
    const r = await this.store.get(idOrSlug, scope, q.version_id);
    if (r) return r;
    throw notFound(idOrSlug, q.version_id !== undefined && (await this.store.get(idOrSlug, scope)) ? q.version_id : undefined);
  }

  /** PUT: the whole guardrail again (name, checks, actions); a new version, the old ones kept. */
  async update(idOrSlug: string, body: unknown, query: unknown, key: ApiKeyRecord | undefined): Promise<GuardrailRef> {
    const scope = managementScope(key);
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const b = this.parseBody(body);
    withinScope(b, scope);
    const current = await this.store.get(idOrSlug, scope);
    if (!current) throw notFound(idOrSlug);
    for (const f of ['workspace_id', 'organisation_id'] as const) {
      if (b[f] !== undefined && b[f] !== current[f]) throw fieldError('invalid_request_body', f, 'a guardrail cannot move to another scope; omit it or give its current value');
    }
    const r = await storeWrite(() => this.store.update(current.id, scope, { name: b.name, checks: b.checks, actions: b.actions }));
    if (!r) throw notFound(idOrSlug);
    return ref(r);
  }

  async delete(idOrSlug: string, query: unknown, key: ApiKeyRecord | undefined): Promise<GuardrailRef & { object: 'guardrail'; deleted: true }> {
    const scope = managementScope(key);
    parseOrThrow(NoQuery, query, 'invalid_query_parameter', 'query');
    const r = await storeWrite(() => this.store.delete(idOrSlug, scope));
    if (!r) throw notFound(idOrSlug);
    return { id: r.id, slug: r.slug, version_id: r.version_id, object: 'guardrail', deleted: true };
  }

  private parseBody(body: unknown): GuardrailBody {
    const b = parseOrThrow(GuardrailBodySchema, body, 'invalid_request_body', 'request body');
    this.validateChecks(b.checks, 'checks');
    return b;
  }
}

/**
 * The plan builder's view of the store: a stored guardrail's checks and whether it denies. Unscoped
 * for now (a slug used in two scopes does not resolve; an id always does): scoping config lookups
 * to the requesting key needs the resolver to pass the key's scope.
 */
export function guardrailLookup(store: Pick<GuardrailStore, 'lookup'>): GuardrailLookup {
  return (idOrSlug, versionId) => {
    const r = store.lookup(idOrSlug, versionId);
    if (!r) return undefined;
    const out: NonNullable<ReturnType<GuardrailLookup>> = { checks: r.checks };
    if (r.actions.onFail !== undefined) out.denyOnFail = r.actions.onFail === 'block';
    if (r.actions.message !== undefined) out.message = r.actions.message;
    return out;
  };
}
