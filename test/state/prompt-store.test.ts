import { describe, expect, it } from 'vitest';
import { MemoryResourceStore } from '../../src/state/memory/resource-store.js';
import { PROMPTS, type PromptContent } from '../../src/state/prompt-store.js';
import { RedisResourceStore } from '../../src/state/redis/resource-store.js';
import { resourceKeys } from '../../src/state/redis/resource-scripts.js';
import { guardrailKeys } from '../../src/state/redis/guardrail-store.js';
import { redisResourceStoreContract, resourceStoreContract, type ResourceFixture } from './resource-store.contract.js';
import { nextEvent, sharedRedis } from './redis-test-utils.js';

const PROMPT: ResourceFixture<PromptContent> = {
  label: 'prompt',
  content: (name, variant = 'a') =>
    variant === 'a'
      ? { name, model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'You help {{customer}}.' }], parameters: { temperature: 0.2 } }
      : { name, prompt: 'Summarise: {{text}}', parameters: { max_tokens: 64 } },
};

resourceStoreContract('memory prompts', PROMPT, async (clock) => ({ store: new MemoryResourceStore(PROMPTS, { now: clock.now }) }));

describe('prompts in Redis (127.0.0.1:6379)', () => {
  const r = sharedRedis();

  redisResourceStoreContract('Redis prompts', PROMPT, r, (conn, opts) => new RedisResourceStore(PROMPTS, conn, opts));

  it('live under pr: beside the guardrails (gr:), and a second instance sees them by pub/sub', async () => {
    const prefix = `${r.runPrefix}share:`;
    const a = new RedisResourceStore(PROMPTS, r.conn, { prefix });
    const b = new RedisResourceStore(PROMPTS, r.conn2, { prefix });
    try {
      await Promise.all([a.ready(3000), b.ready(3000)]);
      const arrived = nextEvent<string>((cb) => b.onRefreshed(cb), 3000, 'the create on b');
      const p = await a.create({ ...PROMPT.content('Support reply'), workspace_id: 'ws-a' });
      expect(await arrived).toBe(p.id);
      expect(b.lookup('support-reply', undefined, { workspace_id: 'ws-a' })).toEqual(p);
      const keys = resourceKeys(prefix, 'pr');
      expect(await r.conn.client.hget(keys.slugs, 'w:ws-a\nsupport-reply')).toBe(p.id);
      expect(JSON.parse((await r.conn.client.hget(keys.item(p.id), `v:${p.version_id}`))!)).toMatchObject({ messages: p.messages, model: 'gpt-4o-mini' });
      expect(await r.conn.client.exists(guardrailKeys(prefix).item(p.id))).toBe(0);
    } finally {
      a.close();
      b.close();
    }
  });

  it('two instances declaring the same file at once: one creates, one finds it; a changed entry adds one version, not two', async () => {
    const prefix = `${r.runPrefix}declare:`;
    const a = new RedisResourceStore(PROMPTS, r.conn, { prefix });
    const b = new RedisResourceStore(PROMPTS, r.conn2, { prefix });
    const id = '0b6f7c9e-3d1a-4c55-9e21-7f3a5b8c2d10';
    try {
      await Promise.all([a.ready(3000), b.ready(3000)]);
      const entry = { ...PROMPT.content('Declared'), workspace_id: 'ws-a' };
      const first = await Promise.all([a.declare(id, entry), b.declare(id, entry)]);
      expect(first.map((d) => d.outcome).sort()).toEqual(['created', 'unchanged']);
      expect(first[0].record).toEqual(first[1].record);
      const changed = { ...PROMPT.content('Declared', 'b'), workspace_id: 'ws-a' };
      const second = await Promise.all([a.declare(id, changed), b.declare(id, changed)]);
      expect(second.map((d) => d.outcome).sort()).toEqual(['unchanged', 'updated']);
      const hash = await r.conn.client.hgetall(resourceKeys(prefix, 'pr').item(id));
      expect(Object.keys(hash).filter((k) => k.startsWith('v:'))).toHaveLength(2);
    } finally {
      a.close();
      b.close();
    }
  });
});
