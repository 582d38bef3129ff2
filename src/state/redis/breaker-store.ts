import { randomUUID } from 'node:crypto';
import { SyncTracker } from './sync-tracker.js';
import type { Admission, AdmitResult, BreakerPolicy, BreakerStore, CircuitStatus, Transition } from '../breaker-store.js';
import { observed, type RedisConnection } from './connection.js';

export interface RedisBreakerStoreOptions {
  /** Key prefix (default `sluice:`). */
  prefix?: string;
  /**
   * How long a probe holds the half-open slot in the cluster (default 60 s) before another instance
   * may probe: bounds the wait when the prober dies without a verdict.
   */
  probeLeaseMs?: number | ((policy: BreakerPolicy) => number);
  /** Idle circuits' shared state expires after this long (default 24 h, at least twice the cooldown). */
  stateTtlMs?: number;
  /** Closed circuits remembered locally (to order late messages), default 10,000. */
  maxEntries?: number;
  /** A transition learned from the shared state (another instance, or a reply that corrects the mirror). */
  onRemoteTransition?: (id: string, transition: Transition) => void;
}

export const REDIS_BREAKER_STORE = 'redis-breaker';

/** Where a prefix's breaker state lives. Exported for tests that write behind the store's back. */
export function breakerKeys(prefix: string) {
  return {
    /** HASH status, failures, openedAt, probeOwner, probeUntil (absent = closed, no failures). */
    state: (id: string) => `${prefix}cb:state:${id}`,
    /** STRING the probe lease: owner, with PX. */
    probe: (id: string) => `${prefix}cb:probe:${id}`,
    /** INCR on every change: orders changes (messages and replies) and detects a Redis that lost its data. */
    seq: `${prefix}cb:seq`,
    /** SET of ids with a state hash, for the snapshot on (re)connect. */
    ids: `${prefix}cb:ids`,
    /** Pub/sub: one JSON message per change. */
    channel: `${prefix}cb:changes`,
  };
}

/** The shared state of one circuit as of change number `seq`. */
interface Shared {
  seq: number;
  status: CircuitStatus;
  failures: number;
  openedAt: number;
  /** Instance holding the probe lease ('' none). */
  owner: string;
  probeUntil: number;
}

interface Entry {
  status: CircuitStatus;
  failures: number;
  openedAt: number;
  /** This instance holds the probe. */
  probing: boolean;
  /** Another instance holds the probe until then (caller's clock); 0 for none. */
  probeUntil: number;
  /** The shared change last applied. */
  seq: number;
  /** Scripts of this instance in flight for this circuit. */
  pending: number;
  /** The newest shared state seen while scripts were in flight (applied when they are all back). */
  deferred: Shared | undefined;
}

interface Reply extends Shared {
  /** The status before the script ran. */
  from: CircuitStatus;
  /** probe only: granted | closed | wait */
  verdict: string;
  left: number;
}

// Shared by the state-changing scripts. KEYS: state, probe, seq, ids. ARGV: id, channel, origin, ttl, ...
const PRELUDE = `
local hk, pk, seqk, idsk = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, channel, origin, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local function load()
  local v = redis.call('HMGET', hk, 'status', 'failures', 'openedAt', 'probeOwner', 'probeUntil')
  local s = { status = v[1] or 'closed', failures = tonumber(v[2] or '0'), openedAt = tonumber(v[3] or '0'),
              owner = v[4] or '', probeUntil = tonumber(v[5] or '0') }
  if s.owner ~= '' and redis.call('GET', pk) ~= s.owner then s.owner = ''; s.probeUntil = 0 end
  return s
end
local function reply(s, seq, from, verdict, left)
  return { seq, s.status, s.failures, s.openedAt, s.owner, s.probeUntil, from, verdict or '', left or 0 }
end
local function unchanged(s, verdict, left)
  return reply(s, tonumber(redis.call('GET', seqk) or '0'), s.status, verdict, left)
end
local function commit(s, from, verdict, left)
  local seq = redis.call('INCR', seqk)
  if s.status == 'closed' and s.failures == 0 then
    redis.call('DEL', hk, pk)
    redis.call('SREM', idsk, id)
  else
    redis.call('HSET', hk, 'status', s.status, 'failures', s.failures, 'openedAt', s.openedAt,
      'probeOwner', s.owner, 'probeUntil', s.probeUntil)
    redis.call('PEXPIRE', hk, ttl)
    redis.call('SADD', idsk, id)
  end
  redis.call('PUBLISH', channel, cjson.encode({ id = id, seq = seq, status = s.status, failures = s.failures,
    openedAt = s.openedAt, owner = s.owner, probeUntil = s.probeUntil }))
  return reply(s, seq, from, verdict, left)
end
`;

// ARGV[5] now, ARGV[6] threshold. Counts a failure; opens at the threshold; a failure while
// half-open re-opens from now; while open nothing changes (the cooldown is not extended).
const FAIL_LUA = `${PRELUDE}
local now, threshold = tonumber(ARGV[5]), tonumber(ARGV[6])
local s = load()
local from = s.status
if s.status == 'open' then return unchanged(s) end
if s.status == 'half-open' then
  s.status = 'open'; s.openedAt = now; s.owner = ''; s.probeUntil = 0
  redis.call('DEL', pk)
  return commit(s, from)
end
s.failures = s.failures + 1
if s.failures >= threshold then s.status = 'open'; s.openedAt = now end
return commit(s, from)
`;

// Closes from closed (resetting the count) or half-open; never from open (a late success).
const SUCCEED_LUA = `${PRELUDE}
local s = load()
if s.status == 'open' or (s.status == 'closed' and s.failures == 0) then return unchanged(s) end
return commit({ status = 'closed', failures = 0, openedAt = 0, owner = '', probeUntil = 0 }, s.status)
`;

// ARGV[5] now, ARGV[6] cooldown, ARGV[7] lease. The one probe of the cluster: SET NX PX of the probe key.
const PROBE_LUA = `${PRELUDE}
local now, cooldown, lease = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local s = load()
if s.status == 'closed' then return unchanged(s, 'closed', 0) end
local left = s.openedAt + cooldown - now
if left > 0 then return unchanged(s, 'wait', left) end
if redis.call('SET', pk, origin, 'NX', 'PX', lease) then
  local from = s.status
  s.status = 'half-open'; s.owner = origin; s.probeUntil = now + lease
  return commit(s, from, 'granted', 0)
end
-- held by another instance: it settles with its request, so ask again soon (as the memory store says)
return unchanged(s, 'wait', 0)
`;

// Gives the probe back (a cancelled probe: no verdict) if this instance holds it.
const RELEASE_LUA = `${PRELUDE}
local s = load()
if s.status ~= 'half-open' or s.owner ~= origin then return unchanged(s) end
redis.call('DEL', pk)
s.owner = ''; s.probeUntil = 0
return commit(s, s.status)
`;

// KEYS: seq, ids. ARGV: state key prefix, probe key prefix. Every circuit with state, and the seq it is as of.
const SNAPSHOT_LUA = `
local out = { tonumber(redis.call('GET', KEYS[1]) or '0') }
for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local v = redis.call('HMGET', ARGV[1] .. id, 'status', 'failures', 'openedAt', 'probeOwner', 'probeUntil')
  if not v[1] then
    redis.call('SREM', KEYS[2], id)
  else
    local owner = v[4] or ''
    if owner ~= '' and redis.call('GET', ARGV[2] .. id) ~= owner then owner = '' end
    local n = #out
    out[n + 1] = id; out[n + 2] = v[1]; out[n + 3] = tonumber(v[2] or '0'); out[n + 4] = tonumber(v[3] or '0')
    out[n + 5] = owner; out[n + 6] = tonumber(v[5] or '0')
  end
end
return out
`;

interface BreakerCommands {
  sluiceCbFail(...args: (string | number)[]): Promise<unknown[]>;
  sluiceCbSucceed(...args: (string | number)[]): Promise<unknown[]>;
  sluiceCbProbe(...args: (string | number)[]): Promise<unknown[]>;
  sluiceCbRelease(...args: (string | number)[]): Promise<unknown[]>;
  sluiceCbSnapshot(...args: (string | number)[]): Promise<unknown[]>;
}

const STATUSES: ReadonlySet<string> = new Set(['closed', 'open', 'half-open']);
function asStatus(v: unknown): CircuitStatus {
  const s = String(v);
  return (STATUSES.has(s) ? s : 'closed') as CircuitStatus;
}

function parseReply(r: unknown[]): Reply {
  return {
    seq: Number(r[0]),
    status: asStatus(r[1]),
    failures: Number(r[2]),
    openedAt: Number(r[3]),
    owner: String(r[4] ?? ''),
    probeUntil: Number(r[5]),
    from: asStatus(r[6]),
    verdict: String(r[7] ?? ''),
    left: Number(r[8] ?? 0),
  };
}

function openFor(retryAfterMs: number): Admission {
  return { kind: 'open', retryAfterMs: Math.max(retryAfterMs, 1000) };
}

/**
 * Breaker state shared through Redis, with a local mirror for the hot path.
 *
 * - The shared state of a circuit (a hash) changes only in Lua scripts, atomically; each change
 *   takes a number from one counter and is published with it. Every instance applies the messages
 *   to its mirror in that order, so a circuit opened anywhere is open everywhere a moment later.
 * - peek/admit answer from the mirror, synchronously, except when the mirror says the cooldown is
 *   over: then admit asks Redis for the probe (SET NX PX of the probe key), so exactly one instance
 *   of the cluster probes.
 * - onSuccess/onFailure change the mirror at once and return its transition (as MemoryBreakerStore
 *   does), then send the script without waiting; its reply or message corrects the mirror if the
 *   cluster knew better. A success on a healthy circuit makes no Redis call.
 * - While Redis is unavailable it is a MemoryBreakerStore (local state only); on reconnect it loads
 *   a snapshot, and the shared state wins.
 */
export class RedisBreakerStore implements BreakerStore {
  readonly prefix: string;
  /** This instance, as probe owner. */
  readonly origin = randomUUID();
  private readonly keys: ReturnType<typeof breakerKeys>;
  private readonly entries = new Map<string, Entry>();
  private readonly lease: (policy: BreakerPolicy) => number;
  private readonly stateTtlMs: number;
  private readonly maxEntries: number;
  private readonly onRemoteTransition: ((id: string, t: Transition) => void) | undefined;
  private readonly stopListening: () => void;
  private readonly cmd: BreakerCommands;
  /** The highest change number seen: a snapshot below it means Redis lost its data. */
  private maxSeq = 0;
  private readonly sync: SyncTracker;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisBreakerStoreOptions = {},
  ) {
    this.prefix = opts.prefix ?? 'sluice:';
    this.keys = breakerKeys(this.prefix);
    const lease = opts.probeLeaseMs ?? 60_000;
    this.lease = typeof lease === 'function' ? lease : () => lease;
    this.stateTtlMs = opts.stateTtlMs ?? 24 * 3600_000;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.onRemoteTransition = opts.onRemoteTransition;
    const client = conn.client;
    client.defineCommand('sluiceCbFail', { numberOfKeys: 4, lua: FAIL_LUA });
    client.defineCommand('sluiceCbSucceed', { numberOfKeys: 4, lua: SUCCEED_LUA });
    client.defineCommand('sluiceCbProbe', { numberOfKeys: 4, lua: PROBE_LUA });
    client.defineCommand('sluiceCbRelease', { numberOfKeys: 4, lua: RELEASE_LUA });
    client.defineCommand('sluiceCbSnapshot', { numberOfKeys: 2, lua: SNAPSHOT_LUA });
    this.cmd = client as unknown as BreakerCommands;
    this.sync = new SyncTracker('RedisBreakerStore', conn, async () =>
      this.applySnapshot(
        await observed(conn, REDIS_BREAKER_STORE, 'snapshot', () =>
          this.cmd.sluiceCbSnapshot(this.keys.seq, this.keys.ids, this.keys.state(''), this.keys.probe('')),
        ),
      ),
    );
    this.stopListening = conn.listen(
      this.keys.channel,
      (msg) => this.onMessage(msg),
      () => void this.sync.run(),
    );
  }

  // ---- the port ---------------------------------------------------------------------------------

  peek(id: string, now: number, policy: BreakerPolicy): Admission {
    return this.decide(this.entries.get(id), now, policy, this.conn.available());
  }

  admit(id: string, now: number, policy: BreakerPolicy): AdmitResult | Promise<AdmitResult> {
    const e = this.entries.get(id);
    const shared = this.conn.available();
    const admission = this.decide(e, now, policy, shared);
    if (admission.kind !== 'probe' || !e) return { admission };
    return shared ? this.takeShared(id, e, now, policy) : takeLocal(e);
  }

  onSuccess(id: string): Transition | undefined {
    const e = this.entries.get(id);
    // A straggler admitted before the circuit opened does not close it: only the probe can.
    if (!e || e.status === 'open') return undefined;
    if (e.status === 'closed' && e.failures === 0) return undefined; // healthy: no Redis call
    const from = e.status;
    e.status = 'closed';
    e.failures = 0;
    e.openedAt = 0;
    e.probing = false;
    e.probeUntil = 0;
    if (this.conn.available()) void this.send(id, e, 'succeed', (k) => this.cmd.sluiceCbSucceed(...k));
    return from === 'closed' ? undefined : { from, to: 'closed' };
  }

  onFailure(id: string, now: number, policy: BreakerPolicy): Transition | undefined {
    const e = this.entry(id);
    if (e.status === 'open') return undefined;
    let t: Transition | undefined;
    if (e.status === 'half-open') {
      e.status = 'open';
      e.openedAt = now;
      e.probing = false;
      e.probeUntil = 0;
      t = { from: 'half-open', to: 'open' };
    } else {
      e.failures++;
      if (e.failures >= policy.failureThreshold) {
        e.status = 'open';
        e.openedAt = now;
        t = { from: 'closed', to: 'open' };
      }
    }
    if (this.conn.available()) {
      void this.send(id, e, 'fail', (k) => this.cmd.sluiceCbFail(...k, Math.floor(now), policy.failureThreshold), policy);
    }
    return t;
  }

  releaseProbe(id: string): void {
    const e = this.entries.get(id);
    if (!e?.probing) return;
    e.probing = false;
    if (this.conn.available()) void this.send(id, e, 'release', (k) => this.cmd.sluiceCbRelease(...k));
  }

  status(id: string): CircuitStatus {
    return this.entries.get(id)?.status ?? 'closed';
  }

  // ---- sync -------------------------------------------------------------------------------------

  /** Resolves once a first load from Redis has completed, or rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return this.sync.ready(timeoutMs);
  }

  /** Resolves after the next completed load from Redis, or rejects after `timeoutMs`. */
  nextSync(timeoutMs = 5000): Promise<void> {
    return this.sync.next(timeoutMs);
  }

  /** Resolves when every script sent so far has been answered (or failed). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Stop listening (the connection is the caller's to close). */
  close(): void {
    this.stopListening();
    this.sync.close();
  }

  // ---- internals --------------------------------------------------------------------------------

  private decide(e: Entry | undefined, now: number, policy: BreakerPolicy, shared: boolean): Admission {
    if (!e || e.status === 'closed') return { kind: 'pass' };
    const left = e.openedAt + policy.cooldownMs - now;
    if (left > 0 || e.probing || (shared && e.status === 'half-open' && e.probeUntil > now)) return openFor(left);
    return { kind: 'probe' };
  }

  private async takeShared(id: string, e: Entry, now: number, policy: BreakerPolicy): Promise<AdmitResult> {
    const lease = Math.max(1, Math.round(this.lease(policy)));
    const r = await this.send(
      id,
      e,
      'probe',
      (k) => this.cmd.sluiceCbProbe(...k, Math.floor(now), policy.cooldownMs, lease),
      policy,
      (reply) => {
        // our own transition: made before the reply is applied, so it is not reported as remote
        if (reply.verdict === 'granted') {
          e.status = 'half-open';
          e.probing = true;
          e.probeUntil = 0;
        }
      },
    );
    if (!r) {
      // Redis failed under us: decide locally, as the memory store would
      const admission = this.decide(e, now, policy, false);
      return admission.kind === 'probe' ? takeLocal(e) : { admission };
    }
    if (r.verdict === 'granted') {
      return { admission: { kind: 'probe' }, transition: r.from === 'half-open' ? undefined : { from: r.from, to: 'half-open' } };
    }
    if (r.verdict === 'closed') return { admission: { kind: 'pass' } };
    return { admission: openFor(r.left) };
  }

  /** Run a script for circuit `id`; its reply is applied in order with the messages. Never rejects. */
  private async send(
    id: string,
    e: Entry,
    op: string,
    run: (keysAndArgs: (string | number)[]) => Promise<unknown[]>,
    policy?: BreakerPolicy,
    beforeApply?: (r: Reply) => void,
  ): Promise<Reply | undefined> {
    const ttl = Math.max(this.stateTtlMs, 2 * (policy?.cooldownMs ?? 0));
    const k = this.keys;
    const args = [k.state(id), k.probe(id), k.seq, k.ids, id, k.channel, this.origin, ttl];
    e.pending++;
    let reply: Reply | undefined;
    const call = observed(this.conn, REDIS_BREAKER_STORE, op, () => run(args));
    this.inFlight.add(call);
    try {
      reply = parseReply(await call);
    } catch {
      reply = undefined; // reported by observed()
    } finally {
      this.inFlight.delete(call);
    }
    e.pending--;
    if (reply) beforeApply?.(reply);
    this.settle(id, e, reply);
    return reply;
  }

  /** A reply came back: apply the newest state known once no script of ours is in flight. */
  private settle(id: string, e: Entry, s: Shared | undefined): void {
    let best = s;
    if (e.deferred && (!best || e.deferred.seq > best.seq)) best = e.deferred;
    if (e.pending > 0) {
      e.deferred = best;
      return;
    }
    e.deferred = undefined;
    if (best && best.seq > e.seq) this.apply(id, e, best);
    this.prune();
  }

  private onMessage(raw: string): void {
    const m = JSON.parse(raw) as { id: string } & Omit<Shared, 'status'> & { status: string };
    const s: Shared = {
      seq: Number(m.seq),
      status: asStatus(m.status),
      failures: Number(m.failures),
      openedAt: Number(m.openedAt),
      owner: String(m.owner ?? ''),
      probeUntil: Number(m.probeUntil),
    };
    this.remote(String(m.id), s, false);
  }

  /** Shared state from a message or snapshot. `force`: the snapshot wins over an equal seq too. */
  private remote(id: string, s: Shared, force: boolean): void {
    if (s.seq > this.maxSeq) this.maxSeq = s.seq;
    let e = this.entries.get(id);
    if (!e) {
      if (s.status === 'closed' && s.failures === 0) return; // nothing to remember
      e = this.entry(id);
    }
    if (force ? s.seq < e.seq : s.seq <= e.seq) return;
    if (e.pending > 0) {
      if (!e.deferred || s.seq > e.deferred.seq) e.deferred = s;
      return;
    }
    this.apply(id, e, s);
  }

  private apply(id: string, e: Entry, s: Shared): void {
    const from = e.status;
    const leasedToUs = s.status === 'half-open' && s.owner === this.origin;
    e.status = s.status;
    e.failures = s.failures;
    e.openedAt = s.openedAt;
    // Only a probe this process is still running counts as ours: the shared state can take it away,
    // never hand it back.
    e.probing = e.probing && leasedToUs;
    e.probeUntil = s.status === 'half-open' && s.owner !== '' && !leasedToUs ? s.probeUntil : 0;
    e.seq = s.seq;
    if (s.seq > this.maxSeq) this.maxSeq = s.seq;
    if (from !== e.status) this.onRemoteTransition?.(id, { from, to: e.status });
    if (leasedToUs && !e.probing && this.conn.available()) {
      // A lease in our name with no probe running here (it settled while Redis was away): give it back.
      void this.send(id, e, 'release', (k) => this.cmd.sluiceCbRelease(...k));
    }
  }

  private applySnapshot(raw: unknown[]): void {
    const seq = Number(raw[0]);
    if (seq < this.maxSeq) {
      // Redis lost its data (restart without persistence, flush): its numbering starts again
      for (const e of this.entries.values()) {
        e.seq = 0;
        if (e.deferred) e.deferred = undefined;
      }
      this.maxSeq = seq;
    }
    const seen = new Set<string>();
    for (let i = 1; i + 5 < raw.length; i += 6) {
      const id = String(raw[i]);
      seen.add(id);
      this.remote(
        id,
        { seq, status: asStatus(raw[i + 1]), failures: Number(raw[i + 2]), openedAt: Number(raw[i + 3]), owner: String(raw[i + 4] ?? ''), probeUntil: Number(raw[i + 5]) },
        true,
      );
    }
    const closed = { seq, status: 'closed', failures: 0, openedAt: 0, owner: '', probeUntil: 0 } as const;
    for (const id of [...this.entries.keys()]) if (!seen.has(id)) this.remote(id, closed, true);
  }

  private entry(id: string): Entry {
    let e = this.entries.get(id);
    if (!e) {
      this.prune(1);
      e = { status: 'closed', failures: 0, openedAt: 0, probing: false, probeUntil: 0, seq: 0, pending: 0, deferred: undefined };
      this.entries.set(id, e);
    }
    return e;
  }

  /** Bounded: forget idle closed circuits (oldest first) beyond maxEntries. */
  private prune(adding = 0): void {
    if (this.entries.size + adding <= this.maxEntries) return;
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.maxEntries * 0.9) break;
      if (e.status === 'closed' && e.failures === 0 && e.pending === 0 && !e.probing) this.entries.delete(id);
    }
  }
}

/** Take the probe in this process only (Redis unavailable): exactly what MemoryBreakerStore does. */
function takeLocal(e: Entry): AdmitResult {
  const from = e.status;
  e.status = 'half-open';
  e.probing = true;
  return { admission: { kind: 'probe' }, transition: from === 'half-open' ? undefined : { from, to: 'half-open' } };
}
