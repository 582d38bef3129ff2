import { afterEach, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/security/master-key.js';
import { MemoryVirtualKeyStore } from '../../src/state/memory/virtual-key-store.js';
import { openRecord, RedisVirtualKeyStore, virtualKeyKeys } from '../../src/state/redis/virtual-key-store.js';
import { DECLARED_VKS, madeVk, virtualKeyStoreContract } from './virtual-key-store.contract.js';
import { deleteByPrefix, nextEvent, sharedRedis } from './redis-test-utils.js';

virtualKeyStoreContract('MemoryVirtualKeyStore', async () => ({ store: new MemoryVirtualKeyStore(DECLARED_VKS) }));

const SERVICE_ACCOUNT = { type: 'service_account', private_key: '-----BEGIN PRIVATE KEY-----\nMIIEvQ-not-a-real-key\n-----END PRIVATE KEY-----\n', client_email: 'sa@p.iam.example' };

describe('RedisVirtualKeyStore (127.0.0.1:6379)', () => {
  const r = sharedRedis();
  const master = MasterKey.generate().key;
  const open: RedisVirtualKeyStore[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  async function store(prefix: string, opts: { conn?: typeof r.conn; masterKey?: MasterKey | undefined } = {}): Promise<RedisVirtualKeyStore> {
    const s = new RedisVirtualKeyStore(opts.conn ?? r.conn, { prefix, declared: DECLARED_VKS, ...('masterKey' in opts ? (opts.masterKey ? { masterKey: opts.masterKey } : {}) : { masterKey: master }) });
    open.push(s);
    await s.ready(3000);
    return s;
  }
  const raw = async (prefix: string) => r.conn.client.hgetall(virtualKeyKeys(prefix).keys);

  let n = 0;
  virtualKeyStoreContract('RedisVirtualKeyStore', async () => {
    const prefix = `${r.runPrefix}${n++}:`;
    return { store: await store(prefix), cleanup: () => deleteByPrefix(r.conn, prefix) };
  });

  it('encrypted at rest: the raw Redis value holds no secret in clear, only a sealed blob (AES-256-GCM, master key id, random IV)', async () => {
    const prefix = `${r.runPrefix}raw:`;
    const s = await store(prefix);
    const a = madeVk('vk-raw', { api_key: 'sk-live-SECRET-value-123456', custom_host: 'https://llm.internal/v1' });
    const c = madeVk('vk-cloud', {
      provider: 'vertex-ai',
      api_key: undefined,
      cloud_c_region: 'europe-west4',
      cloud_c_service_account_json: SERVICE_ACCOUNT,
    } as never);
    const b = madeVk('vk-aws', { provider: 'bedrock', api_key: undefined, cloud_b_access_key_id: 'AKIAEXAMPLEKEYID0001', cloud_b_secret_access_key: 'aws-secret-access-key-0001', cloud_b_region: 'us-east-1' } as never);
    for (const x of [a, b, c]) expect(await s.create(x)).toBe(true);
    // the same secret sealed twice: another IV, another ciphertext
    const twin = madeVk('vk-twin', { api_key: 'sk-live-SECRET-value-123456' });
    await s.create(twin);

    const values = await raw(prefix);
    const text = JSON.stringify(values);
    for (const secret of ['sk-live-SECRET-value-123456', 'AKIAEXAMPLEKEYID0001', 'aws-secret-access-key-0001', 'MIIEvQ-not-a-real-key', 'sa@p.iam.example']) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(Buffer.from(secret).toString('base64'));
      expect(text).not.toContain(Buffer.from(secret).toString('hex'));
    }
    const stored = JSON.parse(values['vk-raw']!);
    expect(stored).toEqual({
      v: 1,
      provider: 'openai',
      fields: { custom_host: 'https://llm.internal/v1' },
      sealed: { alg: 'A256GCM', kid: master.id, iv: expect.any(String), tag: expect.any(String), ct: expect.any(String) },
      workspace_id: 'ws-a',
      made: a.made,
    });
    expect(Buffer.from(stored.sealed.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(stored.sealed.tag, 'base64')).toHaveLength(16);
    const twinStored = JSON.parse(values['vk-twin']!);
    expect(twinStored.sealed.iv).not.toBe(stored.sealed.iv);
    expect(twinStored.sealed.ct).not.toBe(stored.sealed.ct);
    expect(JSON.parse(values['vk-aws']!).fields).toEqual({ cloud_b_region: 'us-east-1' });
    expect(JSON.parse(values['vk-cloud']!).fields).toEqual({ cloud_c_region: 'europe-west4' });
    // the mirror holds them opened, for the plan builder
    expect(s.get('vk-raw')?.value.api_key).toBe('sk-live-SECRET-value-123456');
    // a sealed value moved to another id does not open (the id is its associated data)
    expect(() => openRecord('vk-twin', values['vk-raw']!, master)).toThrow(/does not open/);
    // declared keys are never written
    expect(Object.keys(values).sort()).toEqual(['vk-aws', 'vk-cloud', 'vk-raw', 'vk-twin']);
  });

  it('a key without secrets needs no master key; one with secrets is refused without it', async () => {
    const prefix = `${r.runPrefix}nomaster:`;
    const s = await store(prefix, { masterKey: undefined });
    expect(await s.create(madeVk('vk-plain', { api_key: undefined, custom_host: 'https://llm.internal/v1' } as never))).toBe(true);
    await expect(s.create(madeVk('vk-secret'))).rejects.toThrow(/no master key/);
    expect(Object.keys(await raw(prefix))).toEqual(['vk-plain']);
  });

  it('made on one instance, rotated and deleted through another; a restart loads them; another master key cannot open them', async () => {
    const prefix = `${r.runPrefix}share:`;
    const a = await store(prefix);
    const b = await store(prefix, { conn: r.conn2 });
    let arrived = nextEvent<string>((cb) => b.onRefreshed(cb), 3000, 'the create on b');
    await a.create(madeVk('vk-s', { api_key: 'sk-first' }));
    await arrived;
    expect(b.get('vk-s')?.value.api_key).toBe('sk-first');
    const bVersion = b.get('vk-s')!.version;

    // (a's own create message may still arrive first: wait for the one that brings the rotation)
    arrived = nextEvent<string>((cb) => a.onRefreshed((id) => a.get(id)?.value.api_key === 'sk-second' && cb(id)), 3000, 'the rotation on a');
    expect(await b.replace(madeVk('vk-s', { api_key: 'sk-second' }))).toBe(true);
    await arrived;
    expect(a.get('vk-s')?.value.api_key).toBe('sk-second');
    expect(b.get('vk-s')!.version).toBeGreaterThan(bVersion);

    const restarted = await store(prefix, { conn: r.conn2 });
    expect(restarted.get('vk-s')?.value.api_key).toBe('sk-second');
    expect(restarted.unreadable().size).toBe(0);

    const stranger = await store(prefix, { masterKey: MasterKey.generate().key });
    expect(stranger.get('vk-s')).toBeUndefined();
    expect(stranger.unreadable().get('vk-s')).toMatch(/sealed with master key/);
    const none = await store(prefix, { masterKey: undefined });
    expect(none.unreadable().get('vk-s')).toMatch(/no master key is set/);

    arrived = nextEvent<string>((cb) => a.onRefreshed((id) => id === 'vk-s' && a.get(id) === undefined && cb(id)), 3000, 'the delete on a');
    expect(await b.delete('vk-s')).toBe(true);
    await arrived;
    expect(a.get('vk-s')).toBeUndefined();
  });
});
