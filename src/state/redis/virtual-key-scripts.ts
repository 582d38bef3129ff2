/** Made virtual keys in Redis: where they live, and the Lua scripts that write one atomically (each publishes the field it wrote). */

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

// KEYS: keys hash. ARGV: id, stored JSON, channel. 0 when the id is taken.
export const CREATE_LUA = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1
`;

// KEYS: keys hash. ARGV: id, stored JSON, channel. 0 when the id is not stored.
export const REPLACE_LUA = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1
`;

// KEYS: keys hash. ARGV: id, channel. 0 when already gone.
export const DELETE_LUA = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
`;

// KEYS: keys hash. ARGV: field, the stored JSON read, the re-sealed JSON, channel. 0 when the field
// no longer holds what was read (written or deleted meanwhile): that write stands.
export const RESEAL_LUA = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 1
`;

export interface VirtualKeyCommands {
  sluiceVkCreate(...args: string[]): Promise<number>;
  sluiceVkReseal(...args: string[]): Promise<number>;
  sluiceVkReplace(...args: string[]): Promise<number>;
  sluiceVkDelete(...args: string[]): Promise<number>;
}
