import { afterEach, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/security/master-key.js';
import { MemoryVirtualKeyStore } from '../../src/state/memory/virtual-key-store.js';
import { RedisVirtualKeyStore } from '../../src/state/redis/virtual-key-store.js';
import { openRecord, sealRecord } from '../../src/state/redis/virtual-key-seal.js';
import { virtualKeyKeys } from '../../src/state/redis/virtual-key-scripts.js';
import { DECLARED_VKS, madeVk, R, virtualKeyStoreContract } from './virtual-key-store.contract.js';
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
    const stored = JSON.parse(values[R('vk-raw')]!);
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
    const twinStored = JSON.parse(values[R('vk-twin')]!);
    expect(twinStored.sealed.iv).not.toBe(stored.sealed.iv);
    expect(twinStored.sealed.ct).not.toBe(stored.sealed.ct);
    expect(JSON.parse(values[R('vk-aws')]!).fields).toEqual({ cloud_b_region: 'us-east-1' });
    expect(JSON.parse(values[R('vk-cloud')]!).fields).toEqual({ cloud_c_region: 'europe-west4' });
    // the mirror holds them opened, for the plan builder
    expect(s.get(R('vk-raw'))?.value.api_key).toBe('sk-live-SECRET-value-123456');
    // a sealed value moved to another id, or to the same id of another scope, does not open (its ref is its associated data)
    expect(() => openRecord(R('vk-twin'), values[R('vk-raw')]!, master)).toThrow(/does not open/);
    expect(() => openRecord(R('vk-raw', { workspace_id: 'ws-a', organisation_id: 'org-2' }), values[R('vk-raw')]!, master)).toThrow(/does not open/);
    // declared keys are never written
    expect(Object.keys(values).sort()).toEqual(['vk-aws', 'vk-cloud', 'vk-raw', 'vk-twin'].map((id) => R(id)).sort());
  });

  it('a key without secrets needs no master key; one with secrets is refused without it', async () => {
    const prefix = `${r.runPrefix}nomaster:`;
    const s = await store(prefix, { masterKey: undefined });
    expect(await s.create(madeVk('vk-plain', { api_key: undefined, custom_host: 'https://llm.internal/v1' } as never))).toBe(true);
    await expect(s.create(madeVk('vk-secret'))).rejects.toThrow(/no master key/);
    expect(Object.keys(await raw(prefix))).toEqual([R('vk-plain')]);
  });

  it('made on one instance, rotated and deleted through another; a restart loads them; another master key cannot open them', async () => {
    const prefix = `${r.runPrefix}share:`;
    const a = await store(prefix);
    const b = await store(prefix, { conn: r.conn2 });
    let arrived = nextEvent<string>((cb) => b.onRefreshed(cb), 3000, 'the create on b');
    await a.create(madeVk('vk-s', { api_key: 'sk-first' }));
    await arrived;
    expect(b.get(R('vk-s'))?.value.api_key).toBe('sk-first');
    const bVersion = b.get(R('vk-s'))!.version;

    // (a's own create message may still arrive first: wait for the one that brings the rotation)
    arrived = nextEvent<string>((cb) => a.onRefreshed((id) => a.get(id)?.value.api_key === 'sk-second' && cb(id)), 3000, 'the rotation on a');
    expect(await b.replace(madeVk('vk-s', { api_key: 'sk-second' }))).toBe(true);
    await arrived;
    expect(a.get(R('vk-s'))?.value.api_key).toBe('sk-second');
    expect(b.get(R('vk-s'))!.version).toBeGreaterThan(bVersion);

    const restarted = await store(prefix, { conn: r.conn2 });
    expect(restarted.get(R('vk-s'))?.value.api_key).toBe('sk-second');
    expect(restarted.unreadable().size).toBe(0);

    const stranger = await store(prefix, { masterKey: MasterKey.generate().key });
    expect(stranger.get(R('vk-s'))).toBeUndefined();
    expect(stranger.unreadable().get(R('vk-s'))).toMatch(/sealed with master key/);
    const none = await store(prefix, { masterKey: undefined });
    expect(none.unreadable().get(R('vk-s'))).toMatch(/no master key is set/);

    arrived = nextEvent<string>((cb) => a.onRefreshed((id) => id === R('vk-s') && a.get(id) === undefined && cb(id)), 3000, 'the delete on a');
    expect(await b.delete(R('vk-s'))).toBe(true);
    await arrived;
    expect(a.get(R('vk-s'))).toBeUndefined();
  });

  it('a key stored before ids were scoped (its bare id as field) is read in its scope, rotated and deleted in place; the same id is free in other scopes', async () => {
    const prefix = `${r.runPrefix}legacy:`;
    const old = madeVk('vk-old', { api_key: 'sk-old-secret' }, { workspace_id: 'ws-a', organisation_id: 'org-1' });
    // the old layout: field = id, sealed with the id as associated data
    await r.conn.client.hset(virtualKeyKeys(prefix).keys, 'vk-old', JSON.stringify(sealRecord(old, master, 'vk-old')));
    const s = await store(prefix);
    const ref = R('vk-old', { workspace_id: 'ws-a', organisation_id: 'org-1' });
    expect(s.get(ref)?.value.api_key).toBe('sk-old-secret');
    expect(s.get('vk-old')).toBeUndefined();
    expect(s.unreadable().size).toBe(0);
    // taken in its own scope; free in another organisation's workspace of the same name
    expect(await s.create(madeVk('vk-old', {}, { workspace_id: 'ws-a', organisation_id: 'org-1' }))).toBe(false);
    expect(await s.create(madeVk('vk-old', { api_key: 'sk-other-org' }, { workspace_id: 'ws-a', organisation_id: 'org-2' }))).toBe(true);
    expect(await s.replace(madeVk('vk-old', { api_key: 'sk-rotated' }, { workspace_id: 'ws-a', organisation_id: 'org-1' }))).toBe(true);
    expect(Object.keys(await raw(prefix)).sort()).toEqual([R('vk-old', { workspace_id: 'ws-a', organisation_id: 'org-2' }), 'vk-old'].sort());
    const restarted = await store(prefix, { conn: r.conn2 });
    expect(restarted.get(ref)?.value.api_key).toBe('sk-rotated');
    expect(restarted.get(R('vk-old', { workspace_id: 'ws-a', organisation_id: 'org-2' }))?.value.api_key).toBe('sk-other-org');
    expect(await s.delete(ref)).toBe(true);
    expect(Object.keys(await raw(prefix))).toEqual([R('vk-old', { workspace_id: 'ws-a', organisation_id: 'org-2' })]);
    // a record moved under another scope's ref does not serve there
    expect(() => openRecord(R('vk-old', { workspace_id: 'ws-b', organisation_id: 'org-2' }), JSON.stringify(sealRecord({ ...old, key: { provider: 'openai' } } as never, undefined)), undefined)).toThrow(/another scope/);
  });
});
