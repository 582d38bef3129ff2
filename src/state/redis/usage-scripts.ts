import type { Redis } from 'ioredis';

/**
 * The usage counters (`../usage-counters.ts`) as Lua scripts: each runs atomically in Redis, so every
 * gateway instance admits against the same used + reserved totals. Per policy, unit and period there
 * are three keys:
 *
 * - a HASH with `u:<group>` (units used), `r:<group>` (units reserved by requests in flight) and
 *   `a:<group>` (the alert fired this period);
 * - a ZSET of live reservations, scored by when they expire, each member `<id>|<estimate>|<group>`;
 * - a ZSET of expired reservations (scored by when they expired), so a late settle counts once.
 *
 * All three expire a day after the period ends (a period without reset never ends).
 */
export function usageKeys(prefix: string) {
  const base = (name: string): string => `${prefix}use:${name}`;
  return {
    counter: base,
    reservations: (name: string): string => `${base(name)}:res`,
    expired: (name: string): string => `${base(name)}:gone`,
  };
}

export type UsageKeys = ReturnType<typeof usageKeys>;

/** A reservation's member in the reservations set (the group last: it may contain anything). */
export const member = (id: string, estimate: number, group: string): string => `${id}|${estimate}|${group}`;

// Moves the expired reservations of one counter out of its reserved totals. Needs `now`, `grace`.
const PURGE = `
local function purge(h, res, gone, keep)
  local old = redis.call('ZRANGEBYSCORE', res, '-inf', now, 'LIMIT', 0, 1000)
  for _, m in ipairs(old) do
    local a = string.find(m, '|', 1, true)
    local b = string.find(m, '|', a + 1, true)
    local f = 'r:' .. string.sub(m, b + 1)
    if redis.call('HINCRBY', h, f, -tonumber(string.sub(m, a + 1, b - 1))) <= 0 then redis.call('HDEL', h, f) end
    redis.call('ZREM', res, m)
    redis.call('ZADD', gone, now, m)
  end
  redis.call('ZREMRANGEBYSCORE', gone, '-inf', now - grace)
  if #old > 0 and keep > 0 then redis.call('PEXPIREAT', gone, keep) end
end
`;

/**
 * KEYS: counter, reservations, expired, for each item (each a different policy).
 * ARGV: now, expires (of the new reservation), id, grace; then per item: group, estimate, limit, keep
 * (epoch ms the keys expire at; 0: never).
 * Answers 0 when every item fits and all are reserved; else {index of the first that does not fit,
 * its used, its reserved} and nothing is reserved.
 */
const RESERVE_LUA = `
local now, expires, id, grace = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])
${PURGE}
local n = #KEYS / 3
for i = 1, n do
  purge(KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i], tonumber(ARGV[4 * i + 4]))
end
for i = 1, n do
  local g = ARGV[4 * i + 1]
  local f = redis.call('HMGET', KEYS[3 * i - 2], 'u:' .. g, 'r:' .. g)
  local used, held = tonumber(f[1]) or 0, tonumber(f[2]) or 0
  if used + held + tonumber(ARGV[4 * i + 2]) > tonumber(ARGV[4 * i + 3]) then return { i - 1, used, held } end
end
for i = 1, n do
  local h, res = KEYS[3 * i - 2], KEYS[3 * i - 1]
  local g, est, keep = ARGV[4 * i + 1], ARGV[4 * i + 2], tonumber(ARGV[4 * i + 4])
  redis.call('HINCRBY', h, 'r:' .. g, est)
  redis.call('ZADD', res, expires, id .. '|' .. est .. '|' .. g)
  if keep > 0 then
    redis.call('PEXPIREAT', h, keep)
    redis.call('PEXPIREAT', res, keep)
  end
end
return 0
`;

/**
 * KEYS: counter, reservations, expired, for each item. ARGV: per item: member, reserved group,
 * estimate, actual, counted group, alert threshold (-1: none).
 * A reservation still live gives back its estimate; a live or expired one (not settled before) then
 * counts its actual usage; one settled before counts nothing. Answers {index, used} for each item
 * whose group reached its alert threshold, the first time in its period.
 */
const SETTLE_LUA = `
local out = {}
for i = 1, #KEYS / 3 do
  local h, res, gone = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local a = 6 * (i - 1)
  local m = ARGV[a + 1]
  local apply = false
  if redis.call('ZREM', res, m) == 1 then
    local f = 'r:' .. ARGV[a + 2]
    if redis.call('HINCRBY', h, f, -tonumber(ARGV[a + 3])) <= 0 then redis.call('HDEL', h, f) end
    apply = true
  elseif redis.call('ZREM', gone, m) == 1 then
    apply = true
  end
  local actual = tonumber(ARGV[a + 4])
  if apply and actual > 0 then
    local g = ARGV[a + 5]
    local used = redis.call('HINCRBY', h, 'u:' .. g, actual)
    local alertAt = tonumber(ARGV[a + 6])
    if alertAt >= 0 and used >= alertAt and redis.call('HSETNX', h, 'a:' .. g, '1') == 1 then
      out[#out + 1] = i - 1
      out[#out + 1] = used
    end
  end
end
return out
`;

export interface UsageScripts {
  /** numKeys, keys..., args... */
  sluiceUseReserve(...args: (string | number)[]): Promise<0 | [number, number, number]>;
  sluiceUseSettle(...args: (string | number)[]): Promise<number[]>;
}

/** Registers the scripts on `client` (EVALSHA, loaded on first use) and answers them typed. */
export function usageScripts(client: Redis): UsageScripts {
  client.defineCommand('sluiceUseReserve', { lua: RESERVE_LUA });
  client.defineCommand('sluiceUseSettle', { lua: SETTLE_LUA });
  return client as unknown as UsageScripts;
}
