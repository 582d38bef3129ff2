import type { VirtualKey } from '../config/bootstrap.js';
import type { TenantScope } from '../security/tenancy.js';
import type { Versioned, VersionedLookup } from './versioned-store.js';

/** When and as which version a virtual key made through the API was written. */
export interface MadeMeta {
  created_at: string;
  last_updated_at: string;
  /** A new UUID on every write (a rotation changes it). */
  version_id: string;
}

/** A virtual key with where it lives. Its secrets are in `key`, in memory only (sealed at rest). */
export interface VirtualKeyRecord {
  id: string;
  key: VirtualKey;
  workspace_id?: string;
  organisation_id?: string;
  /** Set on keys made through `/v1/virtual-keys`; absent on the bootstrap file's (declared) keys. */
  made?: MadeMeta;
}

/** A record made through the API. */
export type MadeVirtualKey = VirtualKeyRecord & { made: MadeMeta };

/**
 * A virtual key's place in a store: its id within its (organisation, workspace) pair. Ids are unique
 * per scope, not across scopes, so that a scope cannot learn another's ids by trying to take them:
 * the same id made in two scopes is two keys. The bootstrap file's keys (and any key bound to no
 * scope) are referred to by their bare id; a scoped key by the JSON of [organisation, workspace, id]
 * (null for an absent part), which no bare id can equal (ids never hold `[`).
 */
export function virtualKeyRef(scope: TenantScope, id: string): string {
  if (scope.workspace_id === undefined && scope.organisation_id === undefined) return id;
  return JSON.stringify([scope.organisation_id ?? null, scope.workspace_id ?? null, id]);
}

/**
 * The refs a request whose gateway key has scope `caller` tries for the id it names, most specific
 * first: its own workspace's key, its organisation's (a key made organisation-wide serves every
 * workspace of it), then the bootstrap file's. Nothing of another pair is ever tried, so another
 * scope's key is indistinguishable from one that does not exist.
 */
export function virtualKeyCandidates(id: string, caller: TenantScope | undefined): string[] {
  const out: string[] = [];
  if (caller?.workspace_id !== undefined) out.push(virtualKeyRef(caller, id));
  if (caller?.organisation_id !== undefined) out.push(virtualKeyRef({ organisation_id: caller.organisation_id }, id));
  out.push(id);
  return out;
}

/**
 * Virtual keys (a provider and its credentials, by the id `x-gateway-virtual-key`, `virtual_key` and
 * `@id` name). Two kinds, as gateway keys: *declared* ones (the bootstrap file: the operator's, kept
 * in this process only, never written to a shared store, not changed by the API, usable by every
 * key) and *made* ones (`/v1/virtual-keys`), which the adapter stores (memory: this process; Redis:
 * every instance, across restarts, secrets sealed with the master key), each in its scope.
 *
 * The read side is the plan builder's `VersionedLookup<VirtualKey>`, by ref (`virtualKeyRef`; a
 * declared key's ref is its id): synchronous and local (a shared adapter keeps a mirror); `version`
 * grows on every change and each entry carries the version of the write that stored it, so a plan
 * built from a key that was rotated since is rebuilt.
 */
export interface VirtualKeyStore extends VersionedLookup<VirtualKey> {
  /** The key's record (scope, times), declared or made, by ref. */
  record(ref: string): VirtualKeyRecord | undefined;
  /** The made keys with this id, in whatever scope (the caller filters by what it may see). */
  withId(id: string): MadeVirtualKey[];
  /** The made keys, oldest first (declared keys are not listed). */
  list(): MadeVirtualKey[];
  /** The declared keys (the bootstrap file's), in the file's order: every scope's, changed only in the file. */
  declared(): VirtualKeyRecord[];
  /**
   * Stores a new made key; false (nothing written) when its scope already has a key with that id, or
   * the id is a declared key's (those are every scope's).
   */
  create(record: MadeVirtualKey): Promise<boolean>;
  /** Replaces a made key (a rotation) in its scope; false when its scope has no made key with the id. */
  replace(record: MadeVirtualKey): Promise<boolean>;
  /** Removes a made key by ref; false when no made key has the ref. */
  delete(ref: string): Promise<boolean>;
}

interface Entry extends Versioned<VirtualKey> {
  readonly record: VirtualKeyRecord;
}

/** A record's ref (its scope and id). */
export const refOf = (r: VirtualKeyRecord): string => virtualKeyRef(r, r.id);

/**
 * The virtual keys held in memory, by ref: the memory adapter's whole state and the Redis adapter's
 * mirror. An entry is the lookup's `Versioned<VirtualKey>` itself (no object made per read).
 */
export class VirtualKeyIndex {
  private readonly entries = new Map<string, Entry>();
  private readonly declared = new Set<string>();
  /** id → refs of the made keys with that id (one per scope that has it). */
  private readonly byId = new Map<string, Set<string>>();
  private v = 0;

  constructor(declared: Record<string, VirtualKey> = {}) {
    for (const [id, key] of Object.entries(declared)) {
      this.entries.set(id, { value: key, version: ++this.v, record: { id, key } });
      this.declared.add(id);
    }
  }

  get version(): number {
    return this.v;
  }

  get(ref: string): Versioned<VirtualKey> | undefined {
    return this.entries.get(ref);
  }

  record(ref: string): VirtualKeyRecord | undefined {
    return this.entries.get(ref)?.record;
  }

  has(ref: string): boolean {
    return this.entries.has(ref);
  }

  /** Is `id` a declared key's (every scope's, so no scope may make one)? */
  isDeclared(id: string): boolean {
    return this.declared.has(id);
  }

  isMade(ref: string): boolean {
    return this.entries.has(ref) && !this.declared.has(ref);
  }

  /** May `record` be created: its ref free and its id not a declared key's. */
  free(record: VirtualKeyRecord): boolean {
    return !this.declared.has(record.id) && !this.entries.has(refOf(record));
  }

  withId(id: string): MadeVirtualKey[] {
    const out: MadeVirtualKey[] = [];
    for (const ref of this.byId.get(id) ?? []) out.push(this.entries.get(ref)!.record as MadeVirtualKey);
    return out;
  }

  declaredList(): VirtualKeyRecord[] {
    return [...this.declared].map((id) => this.entries.get(id)!.record);
  }

  list(): MadeVirtualKey[] {
    const out: MadeVirtualKey[] = [];
    for (const [ref, e] of this.entries) if (!this.declared.has(ref)) out.push(e.record as MadeVirtualKey);
    return out.sort((a, b) => (a.made.created_at < b.made.created_at ? -1 : a.made.created_at > b.made.created_at ? 1 : a.id < b.id ? -1 : 1));
  }

  /**
   * Puts (or replaces) a made key under a new version; false when its ref is a declared key's. The
   * same version of the same key put again (a write's own message, read back) keeps its version.
   */
  put(record: MadeVirtualKey): boolean {
    const ref = refOf(record);
    if (this.declared.has(ref)) return false;
    const old = this.entries.get(ref)?.record.made;
    if (old?.version_id === record.made.version_id && old.last_updated_at === record.made.last_updated_at) return true;
    this.entries.set(ref, { value: record.key, version: ++this.v, record });
    let refs = this.byId.get(record.id);
    if (!refs) this.byId.set(record.id, (refs = new Set()));
    refs.add(ref);
    return true;
  }

  /** Removes a made key (never a declared one). */
  remove(ref: string): boolean {
    const e = this.entries.get(ref);
    if (!e || this.declared.has(ref)) return false;
    this.entries.delete(ref);
    const refs = this.byId.get(e.record.id);
    refs?.delete(ref);
    if (refs?.size === 0) this.byId.delete(e.record.id);
    this.v++;
    return true;
  }

  /** Replaces every made key (a mirror's full load); declared keys and unchanged made ones keep their versions. */
  replaceMade(records: Iterable<MadeVirtualKey>): void {
    const seen = new Set<string>();
    for (const r of records) {
      const ref = refOf(r);
      if (this.declared.has(ref)) continue;
      seen.add(ref);
      this.put(r);
    }
    for (const ref of [...this.entries.keys()]) if (!this.declared.has(ref) && !seen.has(ref)) this.remove(ref);
  }
}

/**
 * The reads every adapter answers the same way, from its `VirtualKeyIndex`; an adapter adds only
 * how a write reaches its storage.
 */
export abstract class IndexedVirtualKeyStore implements VirtualKeyStore {
  protected readonly index: VirtualKeyIndex;

  constructor(declared: Record<string, VirtualKey> = {}) {
    this.index = new VirtualKeyIndex(declared);
  }

  get version(): number {
    return this.index.version;
  }

  get(ref: string): Versioned<VirtualKey> | undefined {
    return this.index.get(ref);
  }

  record(ref: string): VirtualKeyRecord | undefined {
    return this.index.record(ref);
  }

  withId(id: string): MadeVirtualKey[] {
    return this.index.withId(id);
  }

  list(): MadeVirtualKey[] {
    return this.index.list();
  }

  declared(): VirtualKeyRecord[] {
    return this.index.declaredList();
  }

  abstract create(record: MadeVirtualKey): Promise<boolean>;
  abstract replace(record: MadeVirtualKey): Promise<boolean>;
  abstract delete(ref: string): Promise<boolean>;
}
