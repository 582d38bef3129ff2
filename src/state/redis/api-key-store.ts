import { keyDigest, type ApiKeyRecord } from '../../security/api-keys.js';
import { KeyRing, type ApiKeyStore, type MadeKeyRecord } from '../api-key-store.js';
import { observed, type RedisConnection } from './connection.js';
import { HashMirror } from './hash-mirror.js';

export const REDIS_API_KEY_STORE = 'redis-api-key';

/** Where a prefix's made keys live in Redis. Exported for tests that look behind the store's back. */
export function apiKeyKeys(prefix: string) {
  return {
    /** HASH SHA-256 digest (hex) → the key's record (JSON). The key itself is stored nowhere. */
    keys: `${prefix}ak:keys`,
    /** Pub/sub channel: the digest (hex) of every key added or revoked. */
    channel: `${prefix}ak:changed`,
  };
}

// KEYS: keys hash. ARGV: digest, record JSON, channel. 0 when the digest is already stored.
const ADD_LUA = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1
`;

// KEYS: keys hash. ARGV: digest, channel. 0 when already gone.
const REVOKE_LUA = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
`;

interface ApiKeyCommands {
  sluiceAkAdd(...args: string[]): Promise<number>;
  sluiceAkRevoke(...args: string[]): Promise<number>;
}

const hex = (digest: string): string => Buffer.from(digest, 'latin1').toString('hex');
const latin1 = (digestHex: string): string => Buffer.from(digestHex, 'hex').toString('latin1');

/** A stored record, or undefined when the JSON is not one (written by something else). */
function parseRecord(json: string | null | undefined): MadeKeyRecord | undefined {
  if (!json) return undefined;
  try {
    const r = JSON.parse(json) as MadeKeyRecord;
    return typeof r.id === 'string' && typeof r.name === 'string' && typeof r.created_at === 'string' ? r : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Made gateway keys shared through Redis: one hash, SHA-256 digest → record, so keys survive a
 * restart and every instance accepts a key made on any of them. `verify` answers from a local mirror
 * (the `KeyRing`, which also holds this instance's declared keys): loaded on every (re)connect, kept
 * current by the `ak:changed` channel (each message names a digest, which is then re-read). A key
 * revoked on one instance is refused by another once the message arrives (milliseconds); while Redis
 * is unreachable the mirror keeps answering as it last knew, and the full load on reconnect catches
 * up with whatever was missed.
 */
export class RedisApiKeyStore implements ApiKeyStore {
  readonly prefix: string;
  private readonly keys: ReturnType<typeof apiKeyKeys>;
  private readonly ring: KeyRing;
  private readonly mirror: HashMirror;

  constructor(
    private readonly conn: RedisConnection,
    opts: { prefix?: string; declared?: Iterable<{ key: string; record: ApiKeyRecord }> } = {},
  ) {
    this.prefix = opts.prefix ?? 'sluice:';
    this.keys = apiKeyKeys(this.prefix);
    const ring = (this.ring = new KeyRing(opts.declared));
    conn.client.defineCommand('sluiceAkAdd', { numberOfKeys: 1, lua: ADD_LUA });
    conn.client.defineCommand('sluiceAkRevoke', { numberOfKeys: 1, lua: REVOKE_LUA });
    this.mirror = new HashMirror(conn, REDIS_API_KEY_STORE, this.keys.keys, this.keys.channel, {
      all(fields) {
        const entries: [string, MadeKeyRecord][] = [];
        for (const [digestHex, json] of Object.entries(fields)) {
          const r = parseRecord(json);
          if (r) entries.push([latin1(digestHex), r]);
        }
        ring.replaceMade(entries);
      },
      one(digestHex, json) {
        const r = parseRecord(json);
        if (r) ring.put(latin1(digestHex), r);
        else ring.remove(latin1(digestHex));
      },
    });
  }

  get size(): number {
    return this.ring.size;
  }

  get version(): number {
    return this.ring.version;
  }

  /** Resolves once a first load from Redis has completed, or rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return this.mirror.ready(timeoutMs);
  }

  /** Called after a digest (hex) named on the channel (by any instance) has been re-read into the mirror. */
  onRefreshed(cb: (digestHex: string) => void): () => void {
    return this.mirror.onRefreshed(cb);
  }

  verify(presented: string): ApiKeyRecord | undefined {
    return this.ring.verify(presented);
  }

  async add(key: string, record: MadeKeyRecord): Promise<boolean> {
    const d = keyDigest(key);
    if (this.ring.has(d)) return false;
    const done = await observed(this.conn, REDIS_API_KEY_STORE, 'add', () =>
      this.commands().sluiceAkAdd(this.keys.keys, hex(d), JSON.stringify(record), this.keys.channel),
    );
    this.mirror.wrote(hex(d));
    return done === 1 && this.ring.put(d, record);
  }

  async revoke(id: string): Promise<MadeKeyRecord | undefined> {
    const d = this.ring.digestOf(id);
    if (d === undefined) return undefined;
    // Taken now: the message of an earlier write may re-read the digest (gone) before this resumes.
    const record = this.ring.get(id);
    const done = await observed(this.conn, REDIS_API_KEY_STORE, 'revoke', () => this.commands().sluiceAkRevoke(this.keys.keys, hex(d), this.keys.channel));
    this.mirror.wrote(hex(d));
    this.ring.remove(d);
    return done === 1 ? record : undefined;
  }

  get(id: string): MadeKeyRecord | undefined {
    return this.ring.get(id);
  }

  list(): MadeKeyRecord[] {
    return this.ring.list();
  }

  /** Stop listening (the connection is the caller's to close). */
  close(): void {
    this.mirror.close();
  }

  private commands(): ApiKeyCommands {
    return this.conn.client as unknown as ApiKeyCommands;
  }
}
