import type { Redis } from 'ioredis';
import type { SharedCircuit } from '../breaker-machine.js';
import type { CircuitStatus } from '../breaker-store.js';

/**
 * The breaker machine (`../breaker-machine.ts`) on the shared state, as Lua scripts: each runs
 * atomically in Redis, so the cluster agrees on every change. They make the reducer's moves (a test
 * drives both with the same events and compares the states), plus what only the shared state can do:
 * number each change, publish it, and lease the one half-open probe of the cluster (SET NX PX).
 */

/** Where a prefix's breaker state lives. */
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

export type BreakerKeys = ReturnType<typeof breakerKeys>;

/** The shared state of one circuit as of change number `seq`. */
export interface Shared extends SharedCircuit {
  seq: number;
}

/** What a state-changing script answers. */
export interface Reply extends Shared {
  /** The status before the script ran. */
  from: CircuitStatus;
  /** probe only: granted | closed | wait */
  verdict: string;
  /** probe only, with `wait`: ms left of the cooldown (0: the probe is held elsewhere). */
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

// The reducer's `failure`. ARGV[5] now, ARGV[6] threshold. Counts a failure; opens at the threshold; a
// failure while half-open re-opens from now; while open nothing changes (the cooldown is not extended).
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

// The reducer's `success`. Closes from closed (resetting the count) or half-open; never from open (a late success).
const SUCCEED_LUA = `${PRELUDE}
local s = load()
if s.status == 'open' or (s.status == 'closed' and s.failures == 0) then return unchanged(s) end
return commit({ status = 'closed', failures = 0, openedAt = 0, owner = '', probeUntil = 0 }, s.status)
`;

// The reducer's `admit` past the cooldown. ARGV[5] now, ARGV[6] cooldown, ARGV[7] lease. The one probe
// of the cluster: SET NX PX of the probe key.
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

// The reducer's `release`. Gives the probe back (a cancelled probe: no verdict) if this instance holds it.
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

type Script = (...args: (string | number)[]) => Promise<unknown[]>;

/** The scripts, on one client: `args(...)` first, then each script's own ARGV. */
export interface BreakerScripts {
  fail(args: (string | number)[], now: number, threshold: number): Promise<Reply>;
  succeed(args: (string | number)[]): Promise<Reply>;
  probe(args: (string | number)[], now: number, cooldownMs: number, leaseMs: number): Promise<Reply>;
  release(args: (string | number)[]): Promise<Reply>;
  /** Every circuit with state: [seq, then per circuit id, status, failures, openedAt, owner, probeUntil]. */
  snapshot(keys: BreakerKeys): Promise<unknown[]>;
}

/** KEYS and the common ARGV of a state-changing script for circuit `id`. */
export function scriptArgs(keys: BreakerKeys, id: string, origin: string, ttlMs: number): (string | number)[] {
  return [keys.state(id), keys.probe(id), keys.seq, keys.ids, id, keys.channel, origin, ttlMs];
}

/** Define the scripts on `client` (idempotent: ioredis keeps one definition per name). */
export function breakerScripts(client: Redis): BreakerScripts {
  client.defineCommand('sluiceCbFail', { numberOfKeys: 4, lua: FAIL_LUA });
  client.defineCommand('sluiceCbSucceed', { numberOfKeys: 4, lua: SUCCEED_LUA });
  client.defineCommand('sluiceCbProbe', { numberOfKeys: 4, lua: PROBE_LUA });
  client.defineCommand('sluiceCbRelease', { numberOfKeys: 4, lua: RELEASE_LUA });
  client.defineCommand('sluiceCbSnapshot', { numberOfKeys: 2, lua: SNAPSHOT_LUA });
  const cmd = client as unknown as Record<'sluiceCbFail' | 'sluiceCbSucceed' | 'sluiceCbProbe' | 'sluiceCbRelease' | 'sluiceCbSnapshot', Script>;
  return {
    fail: async (args, now, threshold) => parseReply(await cmd.sluiceCbFail(...args, Math.floor(now), threshold)),
    succeed: async (args) => parseReply(await cmd.sluiceCbSucceed(...args)),
    probe: async (args, now, cooldownMs, leaseMs) => parseReply(await cmd.sluiceCbProbe(...args, Math.floor(now), cooldownMs, leaseMs)),
    release: async (args) => parseReply(await cmd.sluiceCbRelease(...args)),
    snapshot: (keys) => cmd.sluiceCbSnapshot(keys.seq, keys.ids, keys.state(''), keys.probe('')),
  };
}

const STATUSES: ReadonlySet<string> = new Set(['closed', 'open', 'half-open']);
export function asStatus(v: unknown): CircuitStatus {
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
