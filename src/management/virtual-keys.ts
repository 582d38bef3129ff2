import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { VirtualKeySchema, type VirtualKey } from '../config/bootstrap.js';
import { parseOrThrow } from '../config/issues.js';
import { destinationsNotAccepted, fieldsNotAccepted, SECRET_FIELDS } from '../config/provider-fields.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import type { HostGuard } from '../security/host-guard.js';
import { redact } from '../security/redact.js';
import { visibleTo } from '../security/tenancy.js';
import { refOf, type MadeVirtualKey, type VirtualKeyRecord, type VirtualKeyStore } from '../state/virtual-key-store.js';
import { fieldError, keepScope, managementScope, ownerScope, page, ScopeId, scopedItems, storeWrite, withinScope, type Page, type Scope } from './common.js';
import { ListQuerySchema } from './resources.js';

/** A virtual key's id: what `x-gateway-virtual-key` and configs name (as in the bootstrap file). */
const VirtualKeyId = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'letters, digits, _ . - (1-128 characters)');

/** The body of POST and PUT /v1/virtual-keys: the bootstrap file's entry, plus its id and scope. */
export const VirtualKeyBodySchema = VirtualKeySchema.extend({
  id: VirtualKeyId.optional(),
  workspace_id: ScopeId.optional(),
  organisation_id: ScopeId.optional(),
});

/**
 * Checks that a virtual key can serve requests, as the plan builder would when a request names it:
 * a known provider, only fields that provider uses, an allow_client_destination naming only its
 * destination fields, a custom_host the host guard allows. Throws a 400 naming the body's field.
 */
export type CheckVirtualKey = (key: VirtualKey) => void;

export function virtualKeyChecker(registry: ProviderRegistry, hostGuard: HostGuard): CheckVirtualKey {
  return (key) => {
    const provider = registry.get(key.provider, 'provider');
    const fields = provider.descriptor.fields;
    const unused = fieldsNotAccepted(fields, key as Record<string, unknown>);
    if (unused.length > 0) {
      throw fieldError('invalid_request_body', unused[0]!, `provider "${provider.descriptor.id}" does not use ${unused[0]}; it uses ${[...fields.names].join(', ')}`);
    }
    const allows = destinationsNotAccepted(fields, key.allow_client_destination);
    if (allows.length > 0) {
      throw fieldError(
        'invalid_request_body',
        'allow_client_destination',
        `${allows[0]} is not a destination field of provider "${provider.descriptor.id}"; those are ${fields.destinations.join(', ')}`,
      );
    }
    if (key.custom_host !== undefined) hostGuard.checkUrl(key.custom_host);
    if (key.custom_host === undefined) registry.baseUrl(provider, { provider: provider.descriptor.id });
  };
}

/**
 * A virtual key as the API shows it: its non-secret fields (URL userinfo redacted), which secret
 * fields are set (never their values), and where it comes from: `source` `api` (made here, read-write)
 * or `bootstrap` (the operator's file: `read_only`, no scope, no write times or version).
 */
export type VirtualKeyView = {
  id: string;
  object: 'virtual_key';
  provider: string;
  secrets_set: string[];
  workspace_id: string | null;
  organisation_id: string | null;
  created_at: string | null;
  last_updated_at: string | null;
  version_id: string | null;
  source: 'api' | 'bootstrap';
  read_only: boolean;
} & Record<string, unknown>;

function view(r: VirtualKeyRecord): VirtualKeyView {
  const out: Record<string, unknown> = { id: r.id, object: 'virtual_key' };
  const secrets: string[] = [];
  for (const [k, v] of Object.entries(r.key)) {
    if (v === undefined) continue;
    if (SECRET_FIELDS.has(k)) secrets.push(k);
    else out[k] = redact(v);
  }
  return Object.assign(out, {
    secrets_set: secrets.sort(),
    workspace_id: r.workspace_id ?? null,
    organisation_id: r.organisation_id ?? null,
    created_at: r.made?.created_at ?? null,
    last_updated_at: r.made?.last_updated_at ?? null,
    version_id: r.made?.version_id ?? null,
    source: r.made ? 'api' : 'bootstrap',
    read_only: r.made === undefined,
  }) as VirtualKeyView;
}

/**
 * The query of GET, PUT and DELETE on one key: optionally the scope to find it in. Ids are unique
 * per (organisation, workspace), so an admin key that sees several scopes may find the same id in
 * more than one, and names the one it means.
 */
const OneKeyQuery = z.strictObject({ workspace_id: ScopeId.optional(), organisation_id: ScopeId.optional() });

function notFound(id: string): GatewayError {
  return new GatewayError('virtual_key_not_found', `No virtual key has the id "${id}" (in the scope of this gateway key).`);
}

/** The bootstrap file as messages name it: its file name only (where it lies on the server is not the caller's business). */
function fileName(path: string | undefined): string {
  return path === undefined ? 'the bootstrap file' : `the bootstrap file ${path.split(/[\\/]/).pop()}`;
}

/**
 * The virtual keys API (`/v1/virtual-keys`), over the virtual key store: create, list, get, rotate
 * (PUT: the whole key again, a new version; plans built from the old one are rebuilt), delete.
 * Scoped as every management resource (common.ts `managementScope`). Secret fields (those the
 * provider field groups mark secret: `api_key`, `cloud_b_*` keys, `cloud_c_service_account_json`)
 * are never answered (`secrets_set` names those that are set), never logged, and never stored
 * without a master key: a key with secrets is refused with 503 `master_key_missing` when
 * `SLUICE_MASTER_KEY` is not set (with Redis they are sealed with it at rest). The bootstrap file's
 * keys are the operator's configuration: listed and read here (`source: bootstrap`, `read_only`) by
 * every caller, since they serve every scope; a change to one is a 409 `virtual_key_read_only`
 * naming the file.
 */
export class VirtualKeysService {
  private readonly now: () => number;
  /** How messages name the bootstrap file (its name, not its path). */
  private readonly bootstrapFile: string;

  constructor(
    private readonly store: VirtualKeyStore,
    private readonly check: CheckVirtualKey,
    /** True when a master key is set: secrets may be stored. */
    private readonly canStoreSecrets: boolean,
    opts: { now?: () => number; bootstrapFile?: string | undefined } = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.bootstrapFile = fileName(opts.bootstrapFile);
  }

  async create(body: unknown, key: ApiKeyRecord | undefined): Promise<VirtualKeyView> {
    const scope = managementScope(key);
    const b = parseOrThrow(VirtualKeyBodySchema, body, 'invalid_request_body', 'request body');
    const owner = ownerScope(b, scope);
    const id = b.id ?? `vk-${randomUUID()}`;
    const at = new Date(this.now()).toISOString();
    const record = this.record(id, b, owner, { created_at: at, last_updated_at: at, version_id: randomUUID() });
    // Taken only by a key of the same (organisation, workspace), or by a bootstrap-file key (those
    // serve every scope): another scope's id is free here, so this answer says nothing about it.
    if (!(await storeWrite(() => this.store.create(record)))) {
      if (this.declared(id)) {
        throw new GatewayError('virtual_key_exists', `The id "${id}" is a virtual key of ${this.bootstrapFile}, which serves every scope; choose another id.`, { param: 'id' });
      }
      throw new GatewayError('virtual_key_exists', `A virtual key with the id "${id}" already exists in this scope; choose another id, or rotate that one with PUT.`, { param: 'id' });
    }
    return view(record);
  }

  async list(query: unknown, key: ApiKeyRecord | undefined): Promise<Page<VirtualKeyView>> {
    const scope = managementScope(key);
    const q = parseOrThrow(ListQuerySchema, query, 'invalid_query_parameter', 'query');
    withinScope(q, scope);
    // The bootstrap file's keys serve every scope, so every caller sees them; they live in none, so
    // a query naming a workspace or an organisation (keys living there) leaves them out.
    const declared = q.workspace_id === undefined && q.organisation_id === undefined ? this.store.declared() : [];
    return page([...declared, ...scopedItems(this.store.list(), scope, q)].map(view), q);
  }

  async get(id: string, query: unknown, key: ApiKeyRecord | undefined): Promise<VirtualKeyView> {
    const scope = managementScope(key);
    const q = parseOrThrow(OneKeyQuery, query, 'invalid_query_parameter', 'query');
    withinScope(q, scope);
    const found = this.visible(id, scope, q) ?? this.declared(id);
    if (!found) throw notFound(id);
    return view(found);
  }

  /** PUT (rotate): the whole key again, secrets included; a new `version_id`. The scope cannot move. */
  async update(id: string, body: unknown, query: unknown, key: ApiKeyRecord | undefined): Promise<VirtualKeyView> {
    const scope = managementScope(key);
    const q = parseOrThrow(OneKeyQuery, query, 'invalid_query_parameter', 'query');
    withinScope(q, scope);
    this.refuseDeclared(id, scope, q);
    const b = parseOrThrow(VirtualKeyBodySchema, body, 'invalid_request_body', 'request body');
    withinScope(b, scope);
    // The body's scope picks among several keys with the id only: naming another than the key's is
    // `keepScope`'s 400, not a 404.
    const current = this.visible(id, scope, q, b);
    if (!current) throw notFound(id);
    if (b.id !== undefined && b.id !== id) throw fieldError('invalid_request_body', 'id', `the path names "${id}"; omit id or give that one`);
    keepScope(b, current, 'a virtual key');
    const owner: Scope = { workspace_id: current.workspace_id, organisation_id: current.organisation_id };
    const record = this.record(id, b, owner, { created_at: current.made.created_at, last_updated_at: new Date(this.now()).toISOString(), version_id: randomUUID() });
    if (!(await storeWrite(() => this.store.replace(record)))) throw notFound(id);
    return view(record);
  }

  async delete(id: string, query: unknown, key: ApiKeyRecord | undefined): Promise<{ id: string; object: 'virtual_key'; deleted: true }> {
    const scope = managementScope(key);
    const q = parseOrThrow(OneKeyQuery, query, 'invalid_query_parameter', 'query');
    withinScope(q, scope);
    this.refuseDeclared(id, scope, q);
    const r = this.visible(id, scope, q);
    if (!r) throw notFound(id);
    if (!(await storeWrite(() => this.store.delete(refOf(r))))) throw notFound(id);
    return { id, object: 'virtual_key', deleted: true };
  }

  /** The bootstrap file's key with this id, if there is one. */
  private declared(id: string): VirtualKeyRecord | undefined {
    const r = this.store.record(id);
    return r && r.made === undefined ? r : undefined;
  }

  /**
   * A change to an id that names a bootstrap file's key (and no made key the caller sees: a request
   * would use that one first) is a 409 naming the file: that key is changed in the file, not here.
   */
  private refuseDeclared(id: string, scope: Scope, named: Scope): void {
    if (!this.declared(id) || this.visible(id, scope, named) !== undefined) return;
    throw new GatewayError(
      'virtual_key_read_only',
      `The virtual key "${id}" is declared in ${this.bootstrapFile}: it is the operator's configuration and read-only here. Change it in that file (and restart), or make a key with another id.`,
    );
  }

  /**
   * The made key with this id that the scope may see (narrowed to the scope `named`, when the query
   * or body names one), or undefined: another scope's key with the same id is never considered.
   * Several (an admin key seeing the id in more than one of its workspaces) is a 400 asking which.
   */
  private visible(id: string, scope: Scope, named: Scope, preferred?: Scope): MadeVirtualKey | undefined {
    const within = (r: MadeVirtualKey, s: Scope): boolean =>
      (s.workspace_id === undefined || r.workspace_id === s.workspace_id) && (s.organisation_id === undefined || r.organisation_id === s.organisation_id);
    let found = this.store.withId(id).filter((r) => visibleTo(r, scope) && within(r, named));
    if (found.length === 0) return undefined;
    if (found.length > 1 && preferred) {
      const narrowed = found.filter((r) => within(r, preferred));
      if (narrowed.length > 0) found = narrowed;
    }
    if (found.length > 1) {
      const where = found.map((r) => `(organisation ${r.organisation_id ?? 'none'}, workspace ${r.workspace_id ?? 'none'})`).join(', ');
      throw fieldError('invalid_query_parameter', 'workspace_id', `${found.length} virtual keys of this gateway key's scope have the id "${id}": ${where}; name workspace_id (and organisation_id) to choose one`);
    }
    return found[0]!;
  }

  /** The record to store, once the key is checked and its secrets may be kept. */
  private record(id: string, b: z.output<typeof VirtualKeyBodySchema>, owner: Scope, made: MadeVirtualKey['made']): MadeVirtualKey {
    const { id: _id, workspace_id: _w, organisation_id: _o, ...rest } = b;
    const key = rest as VirtualKey;
    this.check(key);
    const secrets = Object.keys(key).filter((k) => SECRET_FIELDS.has(k) && (key as Record<string, unknown>)[k] !== undefined);
    if (secrets.length > 0 && !this.canStoreSecrets) {
      throw new GatewayError(
        'master_key_missing',
        `This gateway has no master key (SLUICE_MASTER_KEY), so it does not store secrets: ${secrets.join(', ')} cannot be kept. Set the master key, or use the bootstrap file.`,
        { param: secrets[0]! },
      );
    }
    const r: MadeVirtualKey = { id, key, made };
    if (owner.workspace_id !== undefined) r.workspace_id = owner.workspace_id;
    if (owner.organisation_id !== undefined) r.organisation_id = owner.organisation_id;
    return r;
  }
}
