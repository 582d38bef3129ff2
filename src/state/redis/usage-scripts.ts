import type { Redis } from 'ioredis';

/**
 * The usage counters (`../usage-counters.ts`) as one Lua script: each call runs atomically in Redis,
 * so every gateway instance admits against the same used + reserved totals. Per policy, unit and
 * period there are three keys:
 *
 * - a HASH with `u:<group>` (units used), `r:<group>` (units reserved by requests in flight) and
 *   `a:<group>` (the alert fired this period);
 * - a ZSET of live reservations, scored by when they expire, each member `<id>|<estimate>|<group>`;
 * - a ZSET of expired reservations (scored by when they expired), so a late settle counts once.
 *
 * All three expire a day after the period ends (a period without reset never ends).
 *
 * One call carries a batch of operations (the adapter gathers those of one event-loop turn: one
 * round trip and one write for many requests), each applied in order as if alone.
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

/** Operation codes of a batch. */
export const OP_RESERVE = 'R';
export const OP_SETTLE = 'S';

/**
 * KEYS: counter, reservations, expired, for each item of each operation, in order.
 * ARGV[1]: grace (ms an expired reservation is kept for a late settle). Then the operations:
 *
 * - `R`, id, now, expires, n, then per item: group, estimate, limit, keep (epoch ms the keys expire
 *   at; 0: never). First moves the items' expired reservations out of their reserved totals; then
 *   reserves each item's estimate on all items when each has room left (used + reserved < limit;
 *   the estimate need not fit in it), else on none. Answers 0, or 1, the index of the first item
 *   without room, its used, its reserved.
 * - `S`, n, then per item: member, reserved group, estimate, actual, counted group, alert threshold
 *   (-1: none). A reservation still live gives back its estimate; a live or expired one (not settled
 *   before) then counts its actual usage; one settled before counts nothing. Answers the count c of
 *   numbers that follow, then c numbers: {item index, used} per item whose group reached its alert
 *   threshold, the first time in its period.
 */
const BATCH_LUA = `
local grace = tonumber(ARGV[1])
local out = {}
local a, k = 2, 0
local function purge(h, res, gone, keep, now)
  local old = redis.call('ZRANGEBYSCORE', res, '-inf', now, 'LIMIT', 0, 1000)
  for _, m in ipairs(old) do
    local x = string.find(m, '|', 1, true)
    local y = string.find(m, '|', x + 1, true)
    local f = 'r:' .. string.sub(m, y + 1)
    if redis.call('HINCRBY', h, f, -tonumber(string.sub(m, x + 1, y - 1))) <= 0 then redis.call('HDEL', h, f) end
    redis.call('ZREM', res, m)
    redis.call('ZADD', gone, now, m)
  end
  redis.call('ZREMRANGEBYSCORE', gone, '-inf', now - grace)
  if #old > 0 and keep > 0 then redis.call('PEXPIREAT', gone, keep) end
end
while a <= #ARGV do
  if ARGV[a] == '${OP_RESERVE}' then
    local id, now, expires, n = ARGV[a + 1], tonumber(ARGV[a + 2]), ARGV[a + 3], tonumber(ARGV[a + 4])
    local a0, k0 = a + 5, k
    for i = 0, n - 1 do
      purge(KEYS[k0 + 3 * i + 1], KEYS[k0 + 3 * i + 2], KEYS[k0 + 3 * i + 3], tonumber(ARGV[a0 + 4 * i + 3]), now)
    end
    local refused
    for i = 0, n - 1 do
      local g = ARGV[a0 + 4 * i]
      local f = redis.call('HMGET', KEYS[k0 + 3 * i + 1], 'u:' .. g, 'r:' .. g)
      local used, held = tonumber(f[1]) or 0, tonumber(f[2]) or 0
      if used + held >= tonumber(ARGV[a0 + 4 * i + 2]) then
        refused = { i, used, held }
        break
      end
    end
    if refused then
      out[#out + 1] = 1
      out[#out + 1] = refused[1]
      out[#out + 1] = refused[2]
      out[#out + 1] = refused[3]
    else
      for i = 0, n - 1 do
        local h, res = KEYS[k0 + 3 * i + 1], KEYS[k0 + 3 * i + 2]
        local g, est, keep = ARGV[a0 + 4 * i], ARGV[a0 + 4 * i + 1], tonumber(ARGV[a0 + 4 * i + 3])
        redis.call('HINCRBY', h, 'r:' .. g, est)
        redis.call('ZADD', res, expires, id .. '|' .. est .. '|' .. g)
        if keep > 0 then
          redis.call('PEXPIREAT', h, keep)
          redis.call('PEXPIREAT', res, keep)
        end
      end
      out[#out + 1] = 0
    end
    a, k = a0 + 4 * n, k0 + 3 * n
  else
    local n = tonumber(ARGV[a + 1])
    a = a + 2
    local alerts = {}
    for i = 0, n - 1 do
      local h, res, gone = KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
      local apply = false
      if redis.call('ZREM', res, ARGV[a]) == 1 then
        local f = 'r:' .. ARGV[a + 1]
        if redis.call('HINCRBY', h, f, -tonumber(ARGV[a + 2])) <= 0 then redis.call('HDEL', h, f) end
        apply = true
      elseif redis.call('ZREM', gone, ARGV[a]) == 1 then
        apply = true
      end
      local actual = tonumber(ARGV[a + 3])
      if apply and actual > 0 then
        local g = ARGV[a + 4]
        local used = redis.call('HINCRBY', h, 'u:' .. g, actual)
        local alertAt = tonumber(ARGV[a + 5])
        if alertAt >= 0 and used >= alertAt and redis.call('HSETNX', h, 'a:' .. g, '1') == 1 then
          alerts[#alerts + 1] = i
          alerts[#alerts + 1] = used
        end
      end
      a, k = a + 6, k + 3
    end
    out[#out + 1] = #alerts
    for _, v in ipairs(alerts) do out[#out + 1] = v end
  end
end
return out
`;

export interface UsageScripts {
  /** numKeys, keys..., args... */
  sluiceUseBatch(...args: (string | number)[]): Promise<number[]>;
}

/** Registers the script on `client` (EVALSHA, loaded on first use) and answers it typed. */
export function usageScripts(client: Redis): UsageScripts {
  client.defineCommand('sluiceUseBatch', { lua: BATCH_LUA });
  return client as unknown as UsageScripts;
}
