/**
 * The shared resource stores (resource-store.ts) in Redis: where a kind's resources live, and the Lua
 * scripts that create, version and delete one atomically (each publishes the id it wrote).
 */

/** Where a prefix's resources of one kind (`gr`, `pr`) live in Redis. Exported for tests that look behind the store's back. */
export function resourceKeys(prefix: string, kind: string) {
  return {
    /** ZSET id → creation sequence number (the list's order). */
    ids: `${prefix}${kind}:ids`,
    /** STRING counter for the sequence. */
    seq: `${prefix}${kind}:seq`,
    /** HASH `scope\nslug` → id: slug uniqueness per scope. */
    slugs: `${prefix}${kind}:slugs`,
    /** HASH per resource: slug, scope, latest (version id), `v:<version_id>` → the version's JSON. */
    item: (id: string) => `${prefix}${kind}:g:${id}`,
    /** Pub/sub channel: the id of every resource written or deleted. */
    channel: `${prefix}${kind}:changed`,
  };
}

// KEYS: ids, slugs, resource hash, seq. ARGV: id, scope, base slug, version id, version JSON, channel, attempts, first candidate.
// -1 when the id exists (a declaration raced another); nil when no slug is free. Else takes the first
// free slug (base, base-2, ...; from the first candidate on) within the scope, stores the first version, publishes.
export const CREATE_LUA = `
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local slug
for n = tonumber(ARGV[8]), tonumber(ARGV[8]) + tonumber(ARGV[7]) - 1 do
  local c = ARGV[3]
  if n > 1 then c = ARGV[3] .. '-' .. n end
  if redis.call('HSETNX', KEYS[2], ARGV[2] .. '\\n' .. c, ARGV[1]) == 1 then
    slug = c
    break
  end
end
if not slug then return false end
local seq = redis.call('INCR', KEYS[4])
redis.call('ZADD', KEYS[1], seq, ARGV[1])
redis.call('HSET', KEYS[3], 'slug', slug, 'scope', ARGV[2], 'latest', ARGV[4], 'v:' .. ARGV[4], ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[1])
return {slug, seq}
`;

// KEYS: resource hash. ARGV: id, version id, version JSON, channel, expected latest ('' = any).
// 0 when the resource is gone, 2 when its latest version is no longer the expected one, else 1.
export const UPDATE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[5] ~= '' and redis.call('HGET', KEYS[1], 'latest') ~= ARGV[5] then return 2 end
redis.call('HSET', KEYS[1], 'latest', ARGV[2], 'v:' .. ARGV[2], ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 1
`;

// KEYS: resource hash, slugs, ids. ARGV: id, channel. 0 when already gone.
export const DELETE_LUA = `
local f = redis.call('HMGET', KEYS[1], 'slug', 'scope')
if not f[1] then return 0 end
redis.call('HDEL', KEYS[2], f[2] .. '\\n' .. f[1])
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
`;

export interface ResourceCommands {
  sluiceResCreate(...args: (string | number)[]): Promise<[string, number] | -1 | null>;
  sluiceResUpdate(...args: (string | number)[]): Promise<number>;
  sluiceResDelete(...args: (string | number)[]): Promise<number>;
}
