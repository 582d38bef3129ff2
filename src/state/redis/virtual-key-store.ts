import type { VirtualKey } from '../../config/bootstrap.js';
import { MasterKeyError, type SecretSealer } from '../../security/master-key.js';
import { IndexedVirtualKeyStore, refOf, type MadeVirtualKey } from '../virtual-key-store.js';
import { observed, type RedisConnection } from './connection.js';
import { HashMirror } from './hash-mirror.js';
import { openRecord, sealRecord } from './virtual-key-seal.js';
import { CREATE_LUA, DELETE_LUA, REDIS_VIRTUAL_KEY_STORE, REPLACE_LUA, virtualKeyKeys, type VirtualKeyCommands } from './virtual-key-scripts.js';

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
