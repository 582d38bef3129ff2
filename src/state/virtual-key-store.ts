import type { VirtualKey } from '../config/bootstrap.js';
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
 * Virtual keys (a provider and its credentials, by the id `x-gateway-virtual-key`, `virtual_key` and
 * `@id` name). Two kinds, as gateway keys: *declared* ones (the bootstrap file: the operator's, kept
 * in this process only, never written to a shared store, not changed by the API) and *made* ones
 * (`/v1/virtual-keys`), which the adapter stores (memory: this process; Redis: every instance,
 * across restarts, secrets sealed with the master key).
 *
 * The read side is the plan builder's `VersionedLookup<VirtualKey>`: synchronous and local (a shared
 * adapter keeps a mirror); `version` grows on every change and each entry carries the version of
 * the write that stored it, so a plan built from a key that was rotated since is rebuilt.
 */
export interface VirtualKeyStore extends VersionedLookup<VirtualKey> {
  /** The key's record (scope, times), declared or made. */
  record(id: string): VirtualKeyRecord | undefined;
  /** The made keys, oldest first (declared keys are not listed). */
  list(): MadeVirtualKey[];
  /** Stores a new made key; false (nothing written) when the id is taken, by a declared or a made key. */
  create(record: MadeVirtualKey): Promise<boolean>;
  /** Replaces a made key (a rotation); false when no made key has the id. */
  replace(record: MadeVirtualKey): Promise<boolean>;
  /** Removes a made key; false when no made key has the id. */
  delete(id: string): Promise<boolean>;
}

interface Entry extends Versioned<VirtualKey> {
  readonly record: VirtualKeyRecord;
}

/**
 * The virtual keys held in memory, by id: the memory adapter's whole state and the Redis adapter's
 * mirror. An entry is the lookup's `Versioned<VirtualKey>` itself (no object made per read).
 */
export class VirtualKeyIndex {
  private readonly entries = new Map<string, Entry>();
  private readonly declared = new Set<string>();
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

  get(id: string): Versioned<VirtualKey> | undefined {
    return this.entries.get(id);
  }

  record(id: string): VirtualKeyRecord | undefined {
    return this.entries.get(id)?.record;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  isMade(id: string): boolean {
    return this.entries.has(id) && !this.declared.has(id);
  }

  list(): MadeVirtualKey[] {
    const out: MadeVirtualKey[] = [];
    for (const [id, e] of this.entries) if (!this.declared.has(id)) out.push(e.record as MadeVirtualKey);
    return out.sort((a, b) => (a.made.created_at < b.made.created_at ? -1 : a.made.created_at > b.made.created_at ? 1 : a.id < b.id ? -1 : 1));
  }

  /**
   * Puts (or replaces) a made key under a new version; false when the id is a declared key's. The same
   * version of the same key put again (a write's own message, read back) keeps its version.
   */
  put(record: MadeVirtualKey): boolean {
    if (this.declared.has(record.id)) return false;
    const old = this.entries.get(record.id)?.record.made;
    if (old?.version_id === record.made.version_id && old.last_updated_at === record.made.last_updated_at) return true;
    this.entries.set(record.id, { value: record.key, version: ++this.v, record });
    return true;
  }

  /** Removes a made key (never a declared one). */
  remove(id: string): boolean {
    if (this.declared.has(id) || !this.entries.delete(id)) return false;
    this.v++;
    return true;
  }

  /** Replaces every made key (a mirror's full load); declared keys and unchanged made ones keep their versions. */
  replaceMade(records: Iterable<MadeVirtualKey>): void {
    const seen = new Set<string>();
    for (const r of records) {
      if (this.declared.has(r.id)) continue;
      seen.add(r.id);
      this.put(r);
    }
    for (const id of [...this.entries.keys()]) if (!this.declared.has(id) && !seen.has(id)) this.remove(id);
  }
}
