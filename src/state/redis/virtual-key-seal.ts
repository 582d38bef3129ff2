import type { VirtualKey } from '../../config/bootstrap.js';
import { SECRET_FIELDS } from '../../config/provider-fields.js';
import { MasterKeyError, type Sealed, type SecretSealer } from '../../security/master-key.js';
import { refOf, type MadeMeta, type MadeVirtualKey } from '../virtual-key-store.js';

/** A virtual key as Redis holds it: the secret fields sealed (AES-256-GCM) with the master key. */
export interface StoredVirtualKey {
  /** The stored form's version. */
  v: 1;
  provider: string;
  /** The provider fields that are not secret (custom_host, vendor_*, deployment, regions, ...). */
  fields: Record<string, unknown>;
  /** The secret fields (`SECRET_FIELDS`: api_key, cloud_b_*, cloud_c_service_account_json) as JSON, sealed; absent when it has none. */
  sealed?: Sealed;
  workspace_id?: string;
  organisation_id?: string;
  made: MadeMeta;
}

/**
 * What a sealed value is bound to: its hash field (the key's id within its scope), so a ciphertext
 * copied to another id or another scope does not open. A key stored before ids were scoped has its
 * bare id as field, which is what it was sealed with.
 */
export const aad = (field: string): string => `sluice virtual key ${field}`;

/** The stored form under hash field `field`: secrets sealed. Throws a MasterKeyError when there are secrets and no master key. */
export function sealRecord(r: MadeVirtualKey, masterKey: SecretSealer | undefined, field: string = refOf(r)): StoredVirtualKey {
  const { provider, ...rest } = r.key;
  const fields: Record<string, unknown> = {};
  const secrets: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) {
    if (v === undefined) continue;
    (SECRET_FIELDS.has(k) ? secrets : fields)[k] = v;
  }
  const out: StoredVirtualKey = { v: 1, provider, fields, made: r.made };
  if (Object.keys(secrets).length > 0) {
    if (!masterKey) throw new MasterKeyError(`virtual key ${r.id} has secrets and there is no master key to seal them`);
    out.sealed = masterKey.seal(JSON.stringify(secrets), aad(field));
  }
  if (r.workspace_id !== undefined) out.workspace_id = r.workspace_id;
  if (r.organisation_id !== undefined) out.organisation_id = r.organisation_id;
  return out;
}

/** The id a hash field names: the last part of a ref, or a bare id (a key stored before ids were scoped). */
function idOfField(field: string): string {
  if (!field.startsWith('[')) return field;
  const parts = JSON.parse(field) as unknown;
  if (!Array.isArray(parts) || parts.length !== 3 || typeof parts[2] !== 'string') throw new Error('not a virtual key ref');
  return parts[2];
}

/**
 * The record from its stored form under hash field `field`; throws (a MasterKeyError) when its
 * secrets do not open here, or when the field is not the ref of the scope the record names (a record
 * moved to another field does not serve there).
 */
export function openRecord(field: string, json: string, masterKey: SecretSealer | undefined): MadeVirtualKey {
  const id = idOfField(field);
  const s = JSON.parse(json) as StoredVirtualKey;
  if (s.v !== 1 || typeof s.provider !== 'string' || !s.made) throw new Error(`virtual key ${id}: not a stored virtual key`);
  let secrets: Record<string, unknown> = {};
  if (s.sealed) {
    if (!masterKey) throw new MasterKeyError(`virtual key ${id} is sealed with master key ${s.sealed.kid}, and no master key is set`);
    secrets = JSON.parse(masterKey.open(s.sealed, aad(field))) as Record<string, unknown>;
  }
  const r: MadeVirtualKey = { id, key: { provider: s.provider, ...s.fields, ...secrets } as VirtualKey, made: s.made };
  if (s.workspace_id !== undefined) r.workspace_id = s.workspace_id;
  if (s.organisation_id !== undefined) r.organisation_id = s.organisation_id;
  if (field !== id && field !== refOf(r)) throw new Error(`virtual key ${id}: stored under another scope's ref`);
  return r;
}
