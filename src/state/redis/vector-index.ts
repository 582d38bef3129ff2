import { randomUUID } from 'node:crypto';
import { followChannel, type SyncTracker } from './sync-tracker.js';
import type { VectorIndex, VectorMatch } from '../vector-index.js';
import { LshIndex, type LshOptions } from '../lsh-index.js';
import { l2normalize } from '../../util/vector.js';
import { observed, type RedisConnection } from './connection.js';

export interface RedisVectorIndexOptions extends Omit<LshOptions, 'now'> {
  /** Key prefix (default `sluice:`). */
  prefix?: string;
  /** Clock in ms for expiries (tests inject one). Redis key expiry is relative, so clocks may differ. */
  now?: () => number;
}

export const REDIS_VECTOR_STORE = 'redis-vector';

/** Where a prefix's vectors live in Redis. Exported for tests that write behind the index's back. */
export function vectorKeys(prefix: string) {
  return {
    /** SET of partition names. */
    partitions: `${prefix}vec:partitions`,
    /** HASH id → Float32 little-endian bytes (normalised). */
    vectors: (partition: string) => `${prefix}vec:h:${partition}`,
    /** ZSET id → expiresAt (ms). */
    expiry: (partition: string) => `${prefix}vec:z:${partition}`,
    /** Pub/sub channel: one JSON message per add. */
    channel: `${prefix}vec:added`,
  };
}

/** An "added" message: what another instance needs to mirror the entry without a round trip. */
interface AddedMessage {
  o: string;
  p: string;
  id: string;
  exp: number;
  /** base64 of the Float32 bytes */
  v: string;
}

// KEYS: partitions, vectors hash, expiry zset. ARGV: partition, id, bytes, expiresAt, now, channel, message.
// Stores, lazily drops up to 100 expired ids of the partition, keeps both keys alive until the last
// expiry (relative, in the caller's clock) and publishes.
const ADD_LUA = `
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
redis.call('SADD', KEYS[1], ARGV[1])
local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[5], 'LIMIT', 0, 100)
if #old > 0 then
  redis.call('HDEL', KEYS[2], unpack(old))
  redis.call('ZREM', KEYS[3], unpack(old))
end
local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
local ttl = math.max(1000, math.ceil(tonumber(last[2]) - tonumber(ARGV[5])))
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
redis.call('PUBLISH', ARGV[6], ARGV[7])
return 1
`;

function toBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function fromBytes(b: Buffer): Float32Array {
  // copy: a Buffer's offset need not be 4-aligned
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float32Array(copy.buffer, 0, b.byteLength >> 2);
}

/**
 * The shared semantic index. Vectors live in Redis (a hash per partition, an expiry sorted set, a
 * set of partitions), so any instance can find what another stored. Every instance keeps a local
 * mirror (LshIndex) of all partitions: loaded on every (re)connect, kept current by the "added"
 * channel. search() runs on the mirror only: no network on the lookup path, and it keeps answering
 * (from what it has) while Redis is down. add() writes the mirror and then Redis, and rejects when
 * Redis does.
 */
export class RedisVectorIndex implements VectorIndex {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  private readonly keys: ReturnType<typeof vectorKeys>;
  private readonly mirror: LshIndex;
  private readonly now: () => number;
  private readonly origin = randomUUID();
  private readonly stopListening: () => void;
  private readonly sync: SyncTracker;
  private readonly remoteAddListeners = new Set<(partition: string, id: string) => void>();

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisVectorIndexOptions = {},
  ) {
    this.prefix = opts.prefix ?? 'sluice:';
    this.keys = vectorKeys(this.prefix);
    this.now = opts.now ?? Date.now;
    this.mirror = new LshIndex({ ...opts, now: this.now });
    conn.client.defineCommand('sluiceVecAdd', { numberOfKeys: 3, lua: ADD_LUA });
    ({ sync: this.sync, stop: this.stopListening } = followChannel(
      'RedisVectorIndex',
      conn,
      this.keys.channel,
      () => observed(conn, REDIS_VECTOR_STORE, 'load', () => this.load()),
      (msg) => this.onAdded(msg),
    ));
  }

  /** Called when an entry added by another instance reaches the mirror (pub/sub). Returns an unsubscribe. */
  onRemoteAdd(cb: (partition: string, id: string) => void): () => void {
    this.remoteAddListeners.add(cb);
    return () => this.remoteAddListeners.delete(cb);
  }

  /** Resolves once a first load from Redis has completed, or rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return this.sync.ready(timeoutMs);
  }

  /** Resolves after the next completed load from Redis, or rejects after `timeoutMs`. */
  nextSync(timeoutMs = 5000): Promise<void> {
    return this.sync.next(timeoutMs);
  }

  async add(partition: string, id: string, vector: Float32Array, ttlSeconds: number): Promise<void> {
    if (!(ttlSeconds > 0)) return;
    const unit = l2normalize(vector);
    if (!unit) return;
    const now = this.now();
    const expiresAt = Math.round(now + ttlSeconds * 1000);
    this.mirror.add(partition, id, unit, expiresAt);
    const bytes = toBytes(unit);
    const msg: AddedMessage = { o: this.origin, p: partition, id, exp: expiresAt, v: bytes.toString('base64') };
    await observed(this.conn, REDIS_VECTOR_STORE, 'add', () =>
      (this.conn.client as unknown as VecCommands).sluiceVecAdd(
        this.keys.partitions,
        this.keys.vectors(partition),
        this.keys.expiry(partition),
        partition,
        id,
        bytes,
        expiresAt,
        now,
        this.keys.channel,
        JSON.stringify(msg),
      ),
    );
  }

  async search(partition: string, vector: Float32Array, threshold: number): Promise<VectorMatch | undefined> {
    return this.mirror.search(partition, vector, threshold);
  }

  size(): number {
    return this.mirror.size;
  }

  /** Stop listening (the connection is the caller's to close). */
  close(): void {
    this.stopListening();
    this.sync.close();
    this.remoteAddListeners.clear();
  }

  private async load(): Promise<void> {
    const client = this.conn.client;
    const partitions = await client.smembers(this.keys.partitions);
    for (const partition of partitions) {
      const now = this.now();
      const scored = await client.zrangebyscore(this.keys.expiry(partition), `(${now}`, '+inf', 'WITHSCORES');
      if (scored.length === 0) {
        // nothing live: forget the partition unless an add raced in
        if ((await client.exists(this.keys.vectors(partition))) === 0) await client.srem(this.keys.partitions, partition);
        continue;
      }
      const expiry = new Map<string, number>();
      for (let i = 0; i < scored.length; i += 2) expiry.set(scored[i]!, Number(scored[i + 1]));
      let cursor = '0';
      do {
        const [next, flat] = await client.hscanBuffer(this.keys.vectors(partition), cursor, 'COUNT', 500);
        cursor = String(next);
        for (let i = 0; i < flat.length; i += 2) {
          const id = flat[i]!.toString();
          const exp = expiry.get(id);
          if (exp === undefined || (this.mirror.expiresAt(partition, id) ?? -Infinity) >= exp) continue;
          this.mirror.add(partition, id, fromBytes(flat[i + 1]!), exp);
        }
      } while (cursor !== '0');
    }
  }

  private onAdded(raw: string): void {
    const m = JSON.parse(raw) as AddedMessage;
    if (m.o === this.origin) return;
    this.mirror.add(m.p, m.id, fromBytes(Buffer.from(m.v, 'base64')), m.exp);
    for (const cb of [...this.remoteAddListeners]) cb(m.p, m.id);
  }
}

interface VecCommands {
  sluiceVecAdd(...args: (string | number | Buffer)[]): Promise<unknown>;
}
