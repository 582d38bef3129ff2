import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { VirtualKey } from '../../src/config/bootstrap.js';
import { virtualKeyRef, type MadeVirtualKey, type VirtualKeyStore } from '../../src/state/virtual-key-store.js';

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

/** The ref of a made key (madeVk's default scope: workspace ws-a of no organisation). */
export const R = (id: string, scope: { workspace_id?: string; organisation_id?: string } = { workspace_id: 'ws-a' }): string => virtualKeyRef(scope, id);

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
      expect(s.get(R('vk-a', { workspace_id: 'ws-a', organisation_id: 'org-1' }))?.value).toEqual(a.key);
      expect(s.record(R('vk-a', { workspace_id: 'ws-a', organisation_id: 'org-1' }))).toEqual(a);
      expect(s.list()).toEqual([b, a]);
      expect(s.get(R('vk-none'))).toBeUndefined();
      // a made key is found by its ref (its id within its scope), not by its bare id
      expect(s.get('vk-b')).toBeUndefined();
    });

    it('ids are unique per (organisation, workspace): the same id lives in several scopes, each its own key', async () => {
      const scopes = [{ workspace_id: 'ws-a' }, { workspace_id: 'ws-a', organisation_id: 'org-1' }, { workspace_id: 'ws-a', organisation_id: 'org-2' }, { organisation_id: 'org-1' }];
      const made = scopes.map((sc, i) => madeVk('vk-same', { api_key: `sk-same-${i}` }, { workspace_id: undefined, ...sc }));
      for (const m of made) expect(await s.create(m)).toBe(true);
      scopes.forEach((sc, i) => expect(s.get(R('vk-same', sc))?.value.api_key).toBe(`sk-same-${i}`));
      expect(s.withId('vk-same')).toHaveLength(4);
      // taken in its own scope only; a declared id is every scope's
      expect(await s.create(madeVk('vk-same', {}, { workspace_id: 'ws-a', organisation_id: 'org-2' }))).toBe(false);
      expect(await s.create(madeVk('vk-declared', {}, { workspace_id: 'ws-z', organisation_id: 'org-9' }))).toBe(false);
      expect(await s.delete(R('vk-same', scopes[2]))).toBe(true);
      expect(s.get(R('vk-same', scopes[2]))).toBeUndefined();
      expect(s.get(R('vk-same', scopes[1]))?.value.api_key).toBe('sk-same-1');
      expect(s.withId('vk-same').map((r) => r.key.api_key).sort()).toEqual(['sk-same-0', 'sk-same-1', 'sk-same-3']);
      // a rotation replaces the key of its own scope only
      expect(await s.replace(madeVk('vk-same', { api_key: 'sk-rotated' }, { workspace_id: 'ws-a', organisation_id: 'org-1' }))).toBe(true);
      expect(s.get(R('vk-same', scopes[1]))?.value.api_key).toBe('sk-rotated');
      expect(s.get(R('vk-same', scopes[0]))?.value.api_key).toBe('sk-same-0');
      expect(await s.replace(madeVk('vk-same', {}, { workspace_id: 'ws-a', organisation_id: 'org-2' }))).toBe(false);
    });

    it('create refuses a taken id, declared or made; nothing is written', async () => {
      expect(await s.create(madeVk('vk-declared'))).toBe(false);
      expect(s.get('vk-declared')?.value).toEqual(DECLARED_VKS['vk-declared']);
      const first = madeVk('vk-x');
      expect(await s.create(first)).toBe(true);
      expect(await s.create(madeVk('vk-x', { api_key: 'sk-other' }))).toBe(false);
      expect(s.record(R('vk-x'))).toEqual(first);
    });

    it('replace rotates a made key under a new version (never a declared or an absent one); delete removes it', async () => {
      await s.create(madeVk('vk-r'));
      const v1 = s.get(R('vk-r'))!.version;
      const rotated = madeVk('vk-r', { api_key: 'sk-rotated-secret' });
      expect(await s.replace(rotated)).toBe(true);
      expect(s.get(R('vk-r'))?.value.api_key).toBe('sk-rotated-secret');
      expect(s.get(R('vk-r'))!.version).toBeGreaterThan(v1);
      expect(s.version).toBeGreaterThanOrEqual(s.get(R('vk-r'))!.version);
      expect(await s.replace(madeVk('vk-declared'))).toBe(false);
      expect(await s.replace(madeVk('vk-absent'))).toBe(false);
      expect(s.get(R('vk-absent'))).toBeUndefined();
      expect(await s.delete('vk-declared')).toBe(false);
      expect(s.get('vk-declared')).toBeDefined();
      const before = s.version;
      expect(await s.delete(R('vk-r'))).toBe(true);
      expect(s.get(R('vk-r'))).toBeUndefined();
      expect(s.version).toBeGreaterThan(before);
      expect(await s.delete(R('vk-r'))).toBe(false);
    });

    it('versions are never reused: a key deleted and made again has a new one', async () => {
      await s.create(madeVk('vk-again'));
      const v1 = s.get(R('vk-again'))!.version;
      await s.delete(R('vk-again'));
      await s.create(madeVk('vk-again'));
      expect(s.get(R('vk-again'))!.version).toBeGreaterThan(v1);
    });
  });
}
