import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { VirtualKey } from '../../src/config/bootstrap.js';
import type { MadeVirtualKey, VirtualKeyStore } from '../../src/state/virtual-key-store.js';

export interface VirtualKeyStoreHarness {
  store: VirtualKeyStore;
  cleanup?(): Promise<void>;
}

export const DECLARED_VKS: Record<string, VirtualKey> = {
  'vk-declared': { provider: 'openai', api_key: 'sk-declared-secret-0001' },
};

let seq = 0;
/** A made virtual key; `version_id` tells its writes apart. */
export function madeVk(id: string, key: Partial<VirtualKey> = {}, extra: Partial<MadeVirtualKey> = {}, version_id = `v-${seq}`): MadeVirtualKey {
  const at = new Date(1_700_000_000_000 + seq++ * 1000).toISOString();
  return { id, key: { provider: 'openai', api_key: `sk-made-secret-${id}`, ...key } as VirtualKey, workspace_id: 'ws-a', made: { created_at: at, last_updated_at: at, version_id }, ...extra };
}

/** The behaviour every VirtualKeyStore shares, run against each adapter (declared keys: DECLARED_VKS). */
export function virtualKeyStoreContract(name: string, make: () => Promise<VirtualKeyStoreHarness>): void {
  describe(`VirtualKeyStore contract: ${name}`, () => {
    let h: VirtualKeyStoreHarness;
    let s: VirtualKeyStore;
    beforeEach(async () => {
      h = await make();
      s = h.store;
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it('looks up declared keys (not listed) and made ones (listed, oldest first), each with its record', async () => {
      expect(s.get('vk-declared')?.value).toEqual(DECLARED_VKS['vk-declared']);
      expect(s.record('vk-declared')).toEqual({ id: 'vk-declared', key: DECLARED_VKS['vk-declared'] });
      const [b, a] = [madeVk('vk-b'), madeVk('vk-a', { custom_host: 'https://llm.internal/v1' }, { organisation_id: 'org-1' })];
      expect(await s.create(a)).toBe(true);
      expect(await s.create(b)).toBe(true);
      expect(s.get('vk-a')?.value).toEqual(a.key);
      expect(s.record('vk-a')).toEqual(a);
      expect(s.list()).toEqual([b, a]);
      expect(s.get('vk-none')).toBeUndefined();
    });

    it('create refuses a taken id, declared or made; nothing is written', async () => {
      expect(await s.create(madeVk('vk-declared'))).toBe(false);
      expect(s.get('vk-declared')?.value).toEqual(DECLARED_VKS['vk-declared']);
      const first = madeVk('vk-x');
      expect(await s.create(first)).toBe(true);
      expect(await s.create(madeVk('vk-x', { api_key: 'sk-other' }))).toBe(false);
      expect(s.record('vk-x')).toEqual(first);
    });

    it('replace rotates a made key under a new version (never a declared or an absent one); delete removes it', async () => {
      await s.create(madeVk('vk-r'));
      const v1 = s.get('vk-r')!.version;
      const rotated = madeVk('vk-r', { api_key: 'sk-rotated-secret' });
      expect(await s.replace(rotated)).toBe(true);
      expect(s.get('vk-r')?.value.api_key).toBe('sk-rotated-secret');
      expect(s.get('vk-r')!.version).toBeGreaterThan(v1);
      expect(s.version).toBeGreaterThanOrEqual(s.get('vk-r')!.version);
      expect(await s.replace(madeVk('vk-declared'))).toBe(false);
      expect(await s.replace(madeVk('vk-absent'))).toBe(false);
      expect(s.get('vk-absent')).toBeUndefined();
      expect(await s.delete('vk-declared')).toBe(false);
      expect(s.get('vk-declared')).toBeDefined();
      const before = s.version;
      expect(await s.delete('vk-r')).toBe(true);
      expect(s.get('vk-r')).toBeUndefined();
      expect(s.version).toBeGreaterThan(before);
      expect(await s.delete('vk-r')).toBe(false);
    });

    it('versions are never reused: a key deleted and made again has a new one', async () => {
      await s.create(madeVk('vk-again'));
      const v1 = s.get('vk-again')!.version;
      await s.delete('vk-again');
      await s.create(madeVk('vk-again'));
      expect(s.get('vk-again')!.version).toBeGreaterThan(v1);
    });
  });
}
