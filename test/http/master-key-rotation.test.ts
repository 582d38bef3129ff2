/**
 * A master key rotation end to end, on a throw-away redis-server (the gateways use the default key
 * prefix): a gateway with the old key makes virtual keys through the API; a gateway started with the
 * new key and the old one as SLUICE_MASTER_KEY_PREVIOUS serves requests with them; `sluice
 * rotate-master-key` re-seals them while that gateway serves; then a gateway with the new key alone
 * starts and serves them. The command's output names ids and counts, never a key or a secret.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/security/master-key.js';
import { createRedis, type RedisConnection } from '../../src/state/redis/connection.js';
import type { RedisVirtualKeyStore } from '../../src/state/redis/virtual-key-store.js';
import { virtualKeyKeys } from '../../src/state/redis/virtual-key-scripts.js';
import type { StoredVirtualKey } from '../../src/state/redis/virtual-key-seal.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { startGateway, TEST_KEY, type TestGateway } from '../helpers/gateway.js';
import { callApi, post } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { nextEvent } from '../state/redis-test-utils.js';

const KEY_A = 'sk-test-rotation-workspace-a-0123';
const BOOTSTRAP = `
api_keys:
  - { key: ${KEY_A}, name: team-a, workspace_id: ws-a, organisation_id: org-1 }
`;
const OLD = MasterKey.generate();
const NEW = MasterKey.generate();
const SECRET_WS = 'sk-provider-rotation-ws-0001';
const SECRET_ORG = 'sk-provider-rotation-org-0002';
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

/** `sluice rotate-master-key` as an operator runs it. */
function rotate(url: string, env: Record<string, string>) {
  const clean = { ...process.env };
  delete clean.SLUICE_MASTER_KEY;
  delete clean.SLUICE_MASTER_KEY_PREVIOUS;
  delete clean.REDIS_URL;
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'rotate-master-key', '--redis', url], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...clean, ...env },
  });
}

describe('master key rotation without downtime', () => {
  let fake: FakeOpenAI;
  let redis: RedisServer;
  let peek: RedisConnection;
  const gateways: TestGateway[] = [];

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    redis = await startRedisServer();
    peek = createRedis(redis.url);
    await peek.waitUntilReady(3000);
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    await peek?.close();
    await redis?.close();
    await fake?.close();
  });

  async function gateway(masterKey: string, previousMasterKeys?: string): Promise<TestGateway> {
    const g = await startGateway({ options: { redis: redis.url }, bootstrapYaml: BOOTSTRAP, masterKey, ...(previousMasterKeys ? { previousMasterKeys } : {}) });
    gateways.push(g);
    return g;
  }
  /** The provider credential a chat request through `gw` with virtual key `vk` reached the provider with. */
  async function credentialVia(gw: TestGateway, vk: string): Promise<unknown> {
    const before = fake.requests.length;
    const a = await post(`${gw.url}/v1/chat/completions`, { 'x-gateway-api-key': KEY_A, 'x-gateway-virtual-key': vk, 'content-type': 'application/json' }, CHAT);
    expect(a.status, a.text).toBe(200);
    return fake.requests.length > before ? fake.requests.at(-1)!.headers.authorization : undefined;
  }
  const kids = async (): Promise<string[]> =>
    Object.values(await peek.client.hgetall(virtualKeyKeys('sluice:').keys)).map((j) => (JSON.parse(j) as StoredVirtualKey).sealed?.kid ?? 'none');

  it('old seals serve during the rotation, are re-sealed by the command while a gateway serves, and the new key alone serves after', async () => {
    const before = await gateway(OLD.text);
    const made = [
      await callApi(before.url, 'POST', '/v1/virtual-keys', KEY_A, { id: 'team-vk', provider: 'openai', custom_host: fake.baseUrl, api_key: SECRET_WS }),
      await callApi(before.url, 'POST', '/v1/virtual-keys', TEST_KEY, { id: 'org-vk', organisation_id: 'org-1', provider: 'openai', custom_host: fake.baseUrl, api_key: SECRET_ORG }),
    ];
    for (const m of made) expect(m.status, m.text).toBe(201);
    expect(await kids()).toEqual([OLD.key.id, OLD.key.id]);

    // The new key alone does not start: the stored secrets are sealed under the old one.
    await expect(gateway(NEW.text)).rejects.toThrow(/SLUICE_MASTER_KEY_PREVIOUS/);

    // During: the new key with the old one as previous serves every key the old gateway made.
    const during = await gateway(NEW.text, OLD.text);
    expect(during.logs.some((l) => String(l.msg).includes('sluice rotate-master-key') && l.previous_master_key_ids?.[0] === OLD.key.id)).toBe(true);
    expect(await credentialVia(during, 'team-vk')).toBe(`Bearer ${SECRET_WS}`);
    expect(await credentialVia(during, 'org-vk')).toBe(`Bearer ${SECRET_ORG}`);
    await before.close();
    gateways.splice(gateways.indexOf(before), 1);

    // Without the previous key the command opens nothing and changes nothing (exit 1, each named).
    const refused = rotate(redis.url, { SLUICE_MASTER_KEY: NEW.text });
    expect(refused.status, refused.stderr).toBe(1);
    expect(refused.stdout).toContain('re-sealed 0 virtual key(s)');
    expect(refused.stderr).toContain('team-vk');
    expect(refused.stderr).toContain(OLD.key.id);
    expect(await kids()).toEqual([OLD.key.id, OLD.key.id]);

    // The rotation, while `during` serves: it re-reads each re-sealed key from the channel.
    const store = during.gateway.stores.virtualKeys as RedisVirtualKeyStore;
    const reread = new Set<string>();
    const off = store.onRefreshed((f) => reread.add(f));
    const run = rotate(redis.url, { SLUICE_MASTER_KEY: NEW.text, SLUICE_MASTER_KEY_PREVIOUS: OLD.text });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`re-sealed 2 virtual key(s) under master key ${NEW.key.id}`);
    expect(run.stdout).toContain(`SLUICE_MASTER_KEY_PREVIOUS (${OLD.key.id}) can be unset`);
    for (const out of [refused.stdout, refused.stderr, run.stdout, run.stderr]) {
      for (const secret of [OLD.text, NEW.text, SECRET_WS, SECRET_ORG]) expect(out).not.toContain(secret);
    }
    expect(await kids()).toEqual([NEW.key.id, NEW.key.id]);
    while (reread.size < 2) await nextEvent<string>((cb) => store.onRefreshed(cb), 3000, 'the re-sealed keys re-read by the running gateway');
    off();
    expect(store.unreadable().size).toBe(0);
    expect(await credentialVia(during, 'team-vk')).toBe(`Bearer ${SECRET_WS}`);

    // After: the new key alone starts and serves them.
    const after = await gateway(NEW.text);
    expect(await credentialVia(after, 'team-vk')).toBe(`Bearer ${SECRET_WS}`);
    expect(await credentialVia(after, 'org-vk')).toBe(`Bearer ${SECRET_ORG}`);
    // A second run finds nothing left to do.
    const again = rotate(redis.url, { SLUICE_MASTER_KEY: NEW.text });
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain('re-sealed 0 virtual key(s)');
  }, 60_000);

  it('refuses without SLUICE_MASTER_KEY or a Redis URL (exit 2), and SLUICE_MASTER_KEY_PREVIOUS alone does not start a gateway', async () => {
    const noKey = rotate(redis.url, {});
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toContain('SLUICE_MASTER_KEY is not set');
    const noRedis = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'rotate-master-key'], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, REDIS_URL: '', SLUICE_MASTER_KEY: NEW.text },
    });
    expect(noRedis.status).toBe(2);
    expect(noRedis.stderr).toContain('--redis (or REDIS_URL)');
    await expect(startGateway({ options: { redis: redis.url }, previousMasterKeys: OLD.text })).rejects.toThrow(
      /SLUICE_MASTER_KEY_PREVIOUS is set but SLUICE_MASTER_KEY is not/,
    );
  }, 60_000);
});
