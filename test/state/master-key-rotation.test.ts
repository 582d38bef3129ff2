/**
 * A master key rotation on real Redis (127.0.0.1:6379, a prefix of this run's own): virtual keys sealed
 * under the old key keep opening in a store whose keyring has the new key and the old one, are
 * re-sealed under the new key by `resealVirtualKeys` without a version change, then open with the new
 * key alone; a write made while re-sealing is never undone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MasterKey, MasterKeyring, type Sealed, type SecretSealer } from '../../src/security/master-key.js';
import { RedisVirtualKeyStore } from '../../src/state/redis/virtual-key-store.js';
import { resealVirtualKeys } from '../../src/state/redis/virtual-key-reseal.js';
import { sealRecord, type StoredVirtualKey } from '../../src/state/redis/virtual-key-seal.js';
import { virtualKeyKeys } from '../../src/state/redis/virtual-key-scripts.js';
import { refOf, type MadeVirtualKey } from '../../src/state/virtual-key-store.js';
import { deleteByPrefix, nextEvent, sharedRedis } from './redis-test-utils.js';

const OLD = MasterKey.generate().key;
const NEW = MasterKey.generate().key;
const RING = new MasterKeyring(NEW, [OLD]);

const made = (id: string, key: Record<string, unknown>, scope: { workspace_id?: string; organisation_id?: string } = {}): MadeVirtualKey => ({
  id,
  key: { provider: 'openai', ...key } as MadeVirtualKey['key'],
  made: { created_at: '2025-01-01T00:00:00.000Z', last_updated_at: '2025-01-01T00:00:00.000Z', version_id: `v-${id}` },
  ...scope,
});

describe('master key rotation on Redis', () => {
  const r = sharedRedis();
  const open: RedisVirtualKeyStore[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  let n = 0;
  async function store(prefix: string, masterKey: SecretSealer): Promise<RedisVirtualKeyStore> {
    const s = new RedisVirtualKeyStore(r.conn, { prefix, masterKey });
    open.push(s);
    await s.ready(3000);
    return s;
  }
  const stored = async (prefix: string): Promise<Record<string, StoredVirtualKey>> =>
    Object.fromEntries(Object.entries(await r.conn.client.hgetall(virtualKeyKeys(prefix).keys)).map(([f, j]) => [f, JSON.parse(j) as StoredVirtualKey]));

  it('old seals are read during the rotation, re-sealed under the new key after it, and then read with the new key alone', async () => {
    const prefix = `${r.runPrefix}${n++}:`;
    const before = await store(prefix, OLD);
    const keys = [
      made('vk-ws', { api_key: 'sk-rotation-secret-ws-0001' }, { workspace_id: 'ws-a', organisation_id: 'org-1' }),
      made('vk-org', { api_key: 'sk-rotation-secret-org-0002' }, { organisation_id: 'org-1' }),
      made('vk-plain', { custom_host: 'https://llm.internal/v1' }),
    ];
    for (const k of keys) expect(await before.create(k)).toBe(true);

    // A gateway with the new key alone cannot open them: that is what the previous key is for.
    const newOnly = await store(prefix, new MasterKeyring(NEW));
    expect([...newOnly.unreadable().values()].join('\n')).toContain('SLUICE_MASTER_KEY_PREVIOUS');
    expect(newOnly.unreadable().size).toBe(2);

    // During: the keyring opens the old seals, and seals what it writes with the new key.
    const during = await store(prefix, RING);
    expect(during.unreadable().size).toBe(0);
    expect(during.get(refOf(keys[0]!))?.value.api_key).toBe('sk-rotation-secret-ws-0001');
    expect(during.get(refOf(keys[1]!))?.value.api_key).toBe('sk-rotation-secret-org-0002');
    const fresh = made('vk-new', { api_key: 'sk-rotation-secret-new-0003' }, { workspace_id: 'ws-a', organisation_id: 'org-1' });
    expect(await during.create(fresh)).toBe(true);
    expect((await stored(prefix))[refOf(fresh)]!.sealed!.kid).toBe(NEW.id);
    const versions = keys.map((k) => during.get(refOf(k))!.version);

    // Re-seal: the two old seals move to the new key; the running store re-reads them from the
    // channel, still opens them, and keeps their versions (plans built from them stay).
    const resealedRefs = new Set([refOf(keys[0]!), refOf(keys[1]!)]);
    const refreshed = new Set<string>();
    const off = during.onRefreshed((f) => resealedRefs.has(f) && refreshed.add(f));
    const report = await resealVirtualKeys(r.conn, RING, prefix);
    expect(report).toMatchObject({ kid: NEW.id, resealed: 2, current: 2, busy: [] });
    expect(report.unreadable.size).toBe(0);
    while (refreshed.size < 2) await nextEvent<string>((cb) => during.onRefreshed(cb), 3000, 're-sealed keys re-read');
    off();
    expect(during.unreadable().size).toBe(0);
    expect(keys.map((k) => during.get(refOf(k))!.version)).toEqual(versions);
    expect(during.get(refOf(keys[0]!))?.value.api_key).toBe('sk-rotation-secret-ws-0001');

    const after = await stored(prefix);
    for (const [field, s] of Object.entries(after)) if (s.sealed) expect(s.sealed.kid, field).toBe(NEW.id);
    expect(JSON.stringify(after)).not.toContain('sk-rotation-secret');
    // Only the seal changed: content, scope and version are as written.
    expect(after[refOf(keys[0]!)]).toMatchObject({ provider: 'openai', workspace_id: 'ws-a', organisation_id: 'org-1', made: keys[0]!.made });

    // After: the new key alone opens everything; a second run has nothing to do.
    const alone = await store(prefix, new MasterKeyring(NEW));
    expect(alone.unreadable().size).toBe(0);
    expect(alone.get(refOf(keys[1]!))?.value.api_key).toBe('sk-rotation-secret-org-0002');
    expect(alone.get(refOf(fresh))?.value.api_key).toBe('sk-rotation-secret-new-0003');
    expect(await resealVirtualKeys(r.conn, RING, prefix)).toMatchObject({ resealed: 0, current: 4 });
    await deleteByPrefix(r.conn, prefix);
  });

  it('a value rewritten while being re-sealed keeps the rewrite (read again on the next pass); one no key opens is reported and left alone', async () => {
    const prefix = `${r.runPrefix}${n++}:`;
    const writer = await store(prefix, OLD);
    const k = made('vk-busy', { api_key: 'sk-rotation-before-0001' });
    expect(await writer.create(k)).toBe(true);
    const stranger = MasterKey.generate().key;
    const lost = made('vk-lost', { api_key: 'sk-rotation-lost-0002' });
    expect(await (await store(prefix, stranger)).create(lost)).toBe(true);

    // The rotation PUT another gateway makes between the read and the write: sent on the same
    // connection as the re-seal's script, so it reaches Redis first.
    const rotated = { ...k, key: { ...k.key, api_key: 'sk-rotation-after-0003' }, made: { ...k.made, version_id: 'v-rotated' } };
    const rotatedJson = JSON.stringify(sealRecord(rotated, RING, refOf(rotated)));
    let interleaved = false;
    const racing: SecretSealer = {
      id: RING.id,
      seal: (p, aad) => RING.seal(p, aad),
      open: (s: Sealed, aad: string) => {
        if (!interleaved && aad.endsWith('vk-busy')) {
          interleaved = true;
          void r.conn.client.hset(virtualKeyKeys(prefix).keys, refOf(k), rotatedJson);
        }
        return RING.open(s, aad);
      },
    };
    const report = await resealVirtualKeys(r.conn, racing, prefix);
    expect(interleaved).toBe(true);
    expect(report).toMatchObject({ resealed: 0, current: 1, busy: [] });
    expect([...report.unreadable.keys()]).toEqual([refOf(lost)]);
    expect(report.unreadable.get(refOf(lost))).toContain(stranger.id);
    const raw = await r.conn.client.hgetall(virtualKeyKeys(prefix).keys);
    expect(raw[refOf(k)]).toBe(rotatedJson);
    expect((JSON.parse(raw[refOf(lost)]!) as StoredVirtualKey).sealed!.kid).toBe(stranger.id);
    await deleteByPrefix(r.conn, prefix);
  });
});
