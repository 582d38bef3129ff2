import type { VirtualKey } from '../../config/bootstrap.js';
import { SECRET_FIELDS } from '../../config/provider-fields.js';
import { MasterKeyError, type Sealed, type SecretSealer } from '../../security/master-key.js';
import { IndexedVirtualKeyStore, refOf, type MadeMeta, type MadeVirtualKey } from '../virtual-key-store.js';
import { observed, type RedisConnection } from './connection.js';
import { HashMirror } from './hash-mirror.js';

export const REDIS_VIRTUAL_KEY_STORE = 'redis-virtual-key';

/** Where a prefix's made virtual keys live in Redis. Exported for tests that look behind the store's back. */
export function virtualKeyKeys(prefix: string) {
  return {
    /**
     * HASH field → the stored form (JSON): secrets sealed, see `StoredVirtualKey`. The field is the
     * key's ref (`virtualKeyRef`: its id within its scope); a key stored before ids were scoped has
     * its bare id as field, and keeps it (its scope is in its stored form).
     */
    keys: `${prefix}vk:keys`,
    /** Pub/sub channel: the field of every virtual key written or deleted. */
    channel: `${prefix}vk:changed`,
  };
}

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
const aad = (field: string): string => `sluice virtual key ${field}`;

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

// KEYS: keys hash. ARGV: id, stored JSON, channel. 0 when the id is taken.
const CREATE_LUA = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1
`;

// KEYS: keys hash. ARGV: id, stored JSON, channel. 0 when the id is not stored.
const REPLACE_LUA = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1
`;

// KEYS: keys hash. ARGV: id, channel. 0 when already gone.
const DELETE_LUA = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
`;

// KEYS: keys hash. ARGV: field, the stored JSON read, the re-sealed JSON, channel. 0 when the field
// no longer holds what was read (written or deleted meanwhile): that write stands.
const RESEAL_LUA = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 1
`;

interface VirtualKeyCommands {
  sluiceVkCreate(...args: string[]): Promise<number>;
  sluiceVkReseal(...args: string[]): Promise<number>;
  sluiceVkReplace(...args: string[]): Promise<number>;
  sluiceVkDelete(...args: string[]): Promise<number>;
}

export interface RedisVirtualKeyStoreOptions {
  /** Key prefix (default `sluice:`). */
  prefix?: string;
  /** The bootstrap file's keys: in this process only, never written to Redis. */
  declared?: Record<string, VirtualKey>;
  /**
   * Seals secrets on write and opens them on read (a keyring during a rotation opens values sealed
   * under a previous key too); without it, keys with secrets cannot be stored or read.
   */
  masterKey?: SecretSealer;
}

/**
 * Made virtual keys shared through Redis: one hash, id → stored form, with every secret field sealed
 * by AES-256-GCM under the master key (a random IV per write, the master key's id in the record, the
 * virtual key's id as associated data); Redis never holds a secret in clear. The plan builder's
 * lookup answers from a local mirror (the `VirtualKeyIndex`, which also holds this instance's
 * declared keys), opened once when loaded: loaded on every (re)connect, kept current by the
 * `vk:changed` channel. A stored key this instance cannot open (no master key, or another one) is
 * left out of the mirror and listed by `unreadable()` (the gateway refuses to start with any).
 */
export class RedisVirtualKeyStore extends IndexedVirtualKeyStore {
  readonly prefix: string;
  private readonly keys: ReturnType<typeof virtualKeyKeys>;
  private readonly masterKey: SecretSealer | undefined;
  private readonly mirror: HashMirror;
  private readonly unopened = new Map<string, string>();
  /** The hash field each made key lives in, by ref: its ref, or its bare id when stored before ids were scoped. */
  private readonly fieldOf = new Map<string, string>();
  /** ref by hash field (the inverse of `fieldOf`), for a field the channel names as gone. */
  private readonly refOfField = new Map<string, string>();

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisVirtualKeyStoreOptions = {},
  ) {
    super(opts.declared);
    this.prefix = opts.prefix ?? 'sluice:';
    this.keys = virtualKeyKeys(this.prefix);
    this.masterKey = opts.masterKey;
    conn.client.defineCommand('sluiceVkCreate', { numberOfKeys: 1, lua: CREATE_LUA });
    conn.client.defineCommand('sluiceVkReplace', { numberOfKeys: 1, lua: REPLACE_LUA });
    conn.client.defineCommand('sluiceVkDelete', { numberOfKeys: 1, lua: DELETE_LUA });
    this.mirror = new HashMirror(conn, REDIS_VIRTUAL_KEY_STORE, this.keys.keys, this.keys.channel, {
      all: (fields) => {
        this.unopened.clear();
        this.fieldOf.clear();
        this.refOfField.clear();
        const records: MadeVirtualKey[] = [];
        for (const [field, json] of Object.entries(fields)) {
          const r = this.open(field, json);
          if (r) records.push(r);
        }
        this.index.replaceMade(records);
      },
      one: (field, json) => {
        if (json === null) this.unopened.delete(field);
        const r = json === null ? undefined : this.open(field, json);
        if (r) this.index.put(r);
        else {
          const ref = this.refOfField.get(field);
          if (ref !== undefined) {
            this.index.remove(ref);
            this.forget(field);
          }
        }
      },
    });
  }

  /** Resolves once a first load from Redis has completed, or rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return this.mirror.ready(timeoutMs);
  }

  /** Called after a key named on the channel (by any instance) has been re-read into the mirror, with its hash field (its ref, or a bare id for one stored before ids were scoped). */
  onRefreshed(cb: (field: string) => void): () => void {
    return this.mirror.onRefreshed(cb);
  }

  /** Stored keys this instance could not open, hash field → why (never a secret). */
  unreadable(): ReadonlyMap<string, string> {
    return this.unopened;
  }

  async create(record: MadeVirtualKey): Promise<boolean> {
    if (!this.index.free(record)) return false;
    const field = refOf(record);
    const json = JSON.stringify(sealRecord(record, this.masterKey, field));
    const done = await observed(this.conn, REDIS_VIRTUAL_KEY_STORE, 'create', () => this.commands().sluiceVkCreate(this.keys.keys, field, json, this.keys.channel));
    this.mirror.wrote(field);
    if (done !== 1 || !this.index.put(record)) return false;
    this.remember(field, field);
    return true;
  }

  async replace(record: MadeVirtualKey): Promise<boolean> {
    const ref = refOf(record);
    if (!this.index.isMade(ref)) return false;
    const field = this.fieldOf.get(ref) ?? ref;
    const json = JSON.stringify(sealRecord(record, this.masterKey, field));
    const done = await observed(this.conn, REDIS_VIRTUAL_KEY_STORE, 'replace', () => this.commands().sluiceVkReplace(this.keys.keys, field, json, this.keys.channel));
    this.mirror.wrote(field);
    if (done !== 1) {
      this.index.remove(ref); // deleted by another instance meanwhile
      this.forget(field);
      return false;
    }
    return this.index.put(record);
  }

  async delete(ref: string): Promise<boolean> {
    if (!this.index.isMade(ref)) return false;
    const field = this.fieldOf.get(ref) ?? ref;
    const done = await observed(this.conn, REDIS_VIRTUAL_KEY_STORE, 'delete', () => this.commands().sluiceVkDelete(this.keys.keys, field, this.keys.channel));
    this.mirror.wrote(field);
    this.index.remove(ref);
    this.forget(field);
    return done === 1;
  }

  /** Stop listening (the connection is the caller's to close). */
  close(): void {
    this.mirror.close();
  }

  private commands(): VirtualKeyCommands {
    return this.conn.client as unknown as VirtualKeyCommands;
  }

  private remember(field: string, ref: string): void {
    this.fieldOf.set(ref, field);
    this.refOfField.set(field, ref);
  }

  private forget(field: string): void {
    const ref = this.refOfField.get(field);
    if (ref !== undefined && this.fieldOf.get(ref) === field) this.fieldOf.delete(ref);
    this.refOfField.delete(field);
  }

  /** The record, or undefined (noted in `unreadable`, reported through the rate-limited error log) when it does not open here. */
  private open(field: string, json: string): MadeVirtualKey | undefined {
    try {
      const r = openRecord(field, json, this.masterKey);
      this.unopened.delete(field);
      this.remember(field, refOf(r));
      return r;
    } catch (e) {
      const why = e instanceof MasterKeyError ? e.message : `not readable: ${(e as Error).message}`;
      this.unopened.set(field, why);
      this.conn.reportError(`${REDIS_VIRTUAL_KEY_STORE} open`, new Error(why));
      return undefined;
    }
  }
}

/** What `resealVirtualKeys` did. */
export interface ResealReport {
  /** The key id every re-sealed value now carries. */
  kid: string;
  /** Values this run re-sealed under `kid`. */
  resealed: number;
  /** Stored keys that were already under `kid`, or hold no secret. */
  current: number;
  /** Hash field → why its secrets do not open with the keyring given (never a secret); left as they are. */
  unreadable: Map<string, string>;
  /** Fields rewritten by a gateway on every pass of this run (so not re-sealed by it); run it again. */
  busy: string[];
}

/**
 * Re-seals, under the sealer's current key, every made virtual key whose secrets Redis holds sealed
 * under another (`sluice rotate-master-key`). Only the sealed part of a stored value changes, with the
 * same associated data (its hash field), so the key's content, scope and version stay as they were:
 * running gateways re-read it from the channel, still open it (their keyring has both keys), and keep
 * the plans built from it. Each value is replaced only if it still holds what was read (a script
 * compares them), so a rotation PUT made meanwhile is never undone; such a field is read again on the
 * next pass, at most `passes` passes.
 */
export async function resealVirtualKeys(conn: RedisConnection, sealer: SecretSealer, prefix = 'sluice:', passes = 5): Promise<ResealReport> {
  const keys = virtualKeyKeys(prefix);
  conn.client.defineCommand('sluiceVkReseal', { numberOfKeys: 1, lua: RESEAL_LUA });
  const commands = conn.client as unknown as VirtualKeyCommands;
  const report: ResealReport = { kid: sealer.id, resealed: 0, current: 0, unreadable: new Map(), busy: [] };
  let again: Set<string> | undefined; // after the first pass: the fields written meanwhile, only
  for (let pass = 1; pass <= passes && (again === undefined || again.size > 0); pass++) {
    const stored = await observed(conn, REDIS_VIRTUAL_KEY_STORE, 'reseal_read', () => conn.client.hgetall(keys.keys));
    const busy = new Set<string>();
    for (const [field, json] of Object.entries(stored)) {
      if (again && !again.has(field)) continue;
      let next: string;
      try {
        const s = JSON.parse(json) as StoredVirtualKey;
        if (!s.sealed || s.sealed.kid === sealer.id) {
          report.current++;
          continue;
        }
        next = JSON.stringify({ ...s, sealed: sealer.seal(sealer.open(s.sealed, aad(field)), aad(field)) } satisfies StoredVirtualKey);
      } catch (e) {
        report.unreadable.set(field, e instanceof MasterKeyError ? e.message : `not readable: ${(e as Error).message}`);
        continue;
      }
      const done = await observed(conn, REDIS_VIRTUAL_KEY_STORE, 'reseal', () => commands.sluiceVkReseal(keys.keys, field, json, next, keys.channel));
      if (done === 1) report.resealed++;
      else busy.add(field);
    }
    again = busy;
  }
  report.busy = [...(again ?? [])];
  return report;
}
