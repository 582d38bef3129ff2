import { afterEach, describe, expect, it } from 'vitest';
import { generateApiKey, keyDigest } from '../../src/security/api-keys.js';
import { MemoryApiKeyStore } from '../../src/state/memory/api-key-store.js';
import { apiKeyKeys, RedisApiKeyStore } from '../../src/state/redis/api-key-store.js';
import { apiKeyStoreContract, DECLARED, internalsOf, made } from './api-key-store.contract.js';
import { deleteByPrefix, nextEvent, sharedRedis } from './redis-test-utils.js';

apiKeyStoreContract('MemoryApiKeyStore', async () => {
  const store = new MemoryApiKeyStore(DECLARED);
  return { store, internals: async () => internalsOf(store) };
});

describe('RedisApiKeyStore (127.0.0.1:6379)', () => {
  const r = sharedRedis();
  const open: RedisApiKeyStore[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  async function store(prefix: string, conn = r.conn, declared = DECLARED): Promise<RedisApiKeyStore> {
    const s = new RedisApiKeyStore(conn, { prefix, declared });
    open.push(s);
    await s.ready(3000);
    return s;
  }

  let n = 0;
  apiKeyStoreContract('RedisApiKeyStore', async () => {
    const prefix = `${r.runPrefix}${n++}:`;
    const s = await store(prefix);
    return {
      store: s,
      internals: async () => `${internalsOf(s)}${JSON.stringify(await r.conn.client.hgetall(apiKeyKeys(prefix).keys))}`,
      cleanup: () => deleteByPrefix(r.conn, prefix),
    };
  });

  it('a key made on one instance verifies on another; revoked on the other, the first refuses it (by the message, no Redis call on verify)', async () => {
    const prefix = `${r.runPrefix}share:`;
    const a = await store(prefix);
    const b = await store(prefix, r.conn2, []);
    const k = generateApiKey();
    const rec = made('shared', { workspace_id: 'ws-a' });
    const digestHex = Buffer.from(keyDigest(k), 'latin1').toString('hex');
    let arrived = nextEvent<string>((cb) => b.onRefreshed(cb), 3000, 'the add on b');
    expect(await a.add(k, rec)).toBe(true);
    expect(await arrived).toBe(digestHex);
    expect(b.verify(k)).toEqual(rec);
    expect(b.list()).toEqual([rec]);
    // declared keys are each instance's own: b was given none
    expect(b.verify(DECLARED[0]!.key)).toBeUndefined();

    // (a's own add message may still arrive first: wait for the one after which the key is gone)
    arrived = nextEvent<string>((cb) => a.onRefreshed((d) => d === digestHex && a.verify(k) === undefined && cb(d)), 3000, 'the revoke on a');
    expect(await b.revoke(rec.id)).toEqual(rec);
    await arrived;
    expect(a.verify(k)).toBeUndefined();
    expect(a.get(rec.id)).toBeUndefined();
  });

  it('made keys survive a restart: a new store loads them; declared keys are never written to Redis', async () => {
    const prefix = `${r.runPrefix}restart:`;
    const first = await store(prefix);
    const k = generateApiKey();
    const rec = made('kept');
    await first.add(k, rec);
    first.close();
    const raw = await r.conn.client.hgetall(apiKeyKeys(prefix).keys);
    expect(Object.keys(raw)).toEqual([Buffer.from(keyDigest(k), 'latin1').toString('hex')]);
    expect(JSON.parse(Object.values(raw)[0]!)).toEqual(rec);
    const again = await store(prefix, r.conn2);
    expect(again.verify(k)).toEqual(rec);
    expect(again.list()).toEqual([rec]);
  });

  it('a key revoked while an instance was not listening is gone after its next load', async () => {
    const prefix = `${r.runPrefix}missed:`;
    const a = await store(prefix);
    const k = generateApiKey();
    const rec = made('missed');
    await a.add(k, rec);
    // behind the store's back, as a revoke whose message was missed
    await r.conn.client.hdel(apiKeyKeys(prefix).keys, Buffer.from(keyDigest(k), 'latin1').toString('hex'));
    expect(a.verify(k)).toEqual(rec);
    const b = await store(prefix, r.conn2);
    expect(b.verify(k)).toBeUndefined();
  });
});
