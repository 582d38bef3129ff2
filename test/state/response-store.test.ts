import { describe, expect, it } from 'vitest';
import type { ResponseStore, StoredResponse } from '../../src/state/response-store.js';
import { memoryResponseStore } from '../../src/state/memory/response-store.js';
import { redisResponseStore } from '../../src/state/redis/response-store.js';
import { FakeClock } from '../helpers/clock.js';
import { sharedRedis } from './redis-test-utils.js';

interface Harness {
  store: ResponseStore;
  /** Let `ms` pass for the store's clock (a fake clock moves; Redis keeps real time, so it waits). */
  advance(ms: number): Promise<void>;
}

const stored = (id: string, status = 'completed', text = 'hi'): StoredResponse => ({
  response: { id, object: 'response', status, output: [{ type: 'message', content: [{ type: 'output_text', text, annotations: [] }] }] },
  input_items: [{ id: 'msg_1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'héllo 🌍' }] }],
  owner: { organisation_id: 'org-1', workspace_id: 'ws-1' },
});

/** The behaviour every ResponseStore shares, run against each adapter. */
function responseStoreContract(name: string, make: (ttlSeconds: number) => Harness): void {
  describe(`ResponseStore contract: ${name}`, () => {
    it('an unknown id is undefined', async () => {
      expect(await make(60).store.get('resp_nope')).toBeUndefined();
    });

    it('returns what was put: the response, its input items and its owner', async () => {
      const { store } = make(60);
      await store.put(stored('resp_a'));
      expect(await store.get('resp_a')).toEqual(stored('resp_a'));
    });

    it('a second put under the same id replaces it (in_progress → completed)', async () => {
      const { store } = make(60);
      await store.put(stored('resp_b', 'in_progress'));
      await store.put(stored('resp_b', 'completed', 'done'));
      expect((await store.get('resp_b'))?.response).toMatchObject({ status: 'completed' });
    });

    it('delete removes it; deleting an unknown id is harmless', async () => {
      const { store } = make(60);
      await store.put(stored('resp_c'));
      await store.delete('resp_c');
      expect(await store.get('resp_c')).toBeUndefined();
      await expect(store.delete('resp_never')).resolves.toBeUndefined();
    });

    it('a response without an id is refused', async () => {
      const { store } = make(60);
      await expect(store.put({ ...stored('x'), response: { object: 'response' } })).rejects.toThrow(/id/);
    });

    it('an item is found by its id within its tenant, once its response is stored queued or ended', async () => {
      const { store } = make(60);
      const owner = stored('x').owner;
      const withIds = (id: string, status: string): StoredResponse => {
        const r = stored(id, status);
        return { ...r, input_items: [{ ...r.input_items[0]!, id: `in_${id}` }], response: { ...r.response, output: [{ id: `out_${id}`, type: 'message', role: 'assistant', content: [] }] } };
      };
      await store.put(withIds('resp_running', 'in_progress'));
      expect(await store.item('in_resp_running', owner)).toBeUndefined();
      await store.put(withIds('resp_i', 'completed'));
      expect(await store.item('in_resp_i', owner)).toMatchObject({ id: 'in_resp_i', role: 'user' });
      expect(await store.item('out_resp_i', owner)).toMatchObject({ id: 'out_resp_i', role: 'assistant' });
      expect(await store.item('out_resp_i', { ...owner, workspace_id: 'ws-2' })).toBeUndefined();
      expect(await store.item('out_resp_i', { workspace_id: 'ws-1' })).toBeUndefined();
      expect(await store.item('msg_unknown', owner)).toBeUndefined();
      await store.delete('resp_i');
      expect(await store.item('in_resp_i', owner)).toBeUndefined();
    });

    it('a response expires after the time to live, not before', async () => {
      const h = make(0.2);
      await h.store.put(stored('resp_d'));
      expect(await h.store.get('resp_d')).toBeDefined();
      await h.advance(300);
      expect(await h.store.get('resp_d')).toBeUndefined();
    });
  });
}

responseStoreContract('memory', (ttlSeconds) => {
  const clock = new FakeClock();
  return { store: memoryResponseStore({ maxBytes: 1 << 20, ttlSeconds, now: clock.now }), advance: async (ms) => clock.advance(ms) };
});

describe('Redis (127.0.0.1:6379)', () => {
  const redis = sharedRedis();
  let n = 0;
  responseStoreContract('redis', (ttlSeconds) => ({
    store: redisResponseStore(redis.conn, { prefix: `${redis.runPrefix}${n++}:`, ttlSeconds }),
    // Redis keeps real time and expiry has no event: wait the time out (short, bounded).
    advance: (ms) => new Promise((r) => setTimeout(r, ms)),
  }));

  it('a second connection (another instance) reads what the first stored', async () => {
    const prefix = `${redis.runPrefix}shared:`;
    await redisResponseStore(redis.conn, { prefix }).put(stored('resp_e'));
    expect(await redisResponseStore(redis.conn2, { prefix }).get('resp_e')).toEqual(stored('resp_e'));
  });
});

describe('memory response store', () => {
  it('keeps its bytes bounded: the least recently used responses go first', async () => {
    const store = memoryResponseStore({ maxBytes: 4_000 });
    for (let i = 0; i < 20; i++) await store.put(stored(`resp_${i}`));
    expect(await store.get('resp_0')).toBeUndefined();
    expect(await store.get('resp_19')).toBeDefined();
  });
});
