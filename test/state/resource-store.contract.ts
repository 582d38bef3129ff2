import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResourceDraft, ResourceScope, ResourceStoreOptions, ScopedResourceStore } from '../../src/state/resource-store.js';
import type { RedisConnection } from '../../src/state/redis/connection.js';
import type { RedisResourceStore } from '../../src/state/redis/resource-store.js';
import { deleteByPrefix } from './redis-test-utils.js';

export interface ResourceStoreHarness<C extends { name: string }> {
  store: ScopedResourceStore<C>;
  cleanup?(): Promise<void>;
}

/** A kind's test content: `content(name, variant)` differs between variants 'a' and 'b'. */
export interface ResourceFixture<C extends { name: string }> {
  /** The kind's label (the slug when a name leaves nothing). */
  label: string;
  content(name: string, variant?: 'a' | 'b'): C;
}

const WS_A = { workspace_id: 'ws-a' };
const WS_B = { workspace_id: 'ws-b' };
const ORG = { organisation_id: 'org-1' };
const ALL = {};

const page = (page_size: number, current_page: number) => ({ page_size, current_page });

/** The behaviour every versioned, scoped resource store shares (guardrails, prompts), run against each adapter. */
export function resourceStoreContract<C extends { name: string }>(
  name: string,
  fixture: ResourceFixture<C>,
  make: (clock: { now(): number }) => Promise<ResourceStoreHarness<C>>,
): void {
  const draft = (n: string, scope: ResourceScope = WS_A, variant: 'a' | 'b' = 'a'): ResourceDraft<C> => ({ ...fixture.content(n, variant), ...scope });
  const change = (n: string, variant: 'a' | 'b' = 'b'): C => fixture.content(n, variant);
  describe(`${fixture.label} store contract: ${name}`, () => {
    let t = 1_700_000_000_000;
    const clock = { now: () => t };
    let h: ResourceStoreHarness<C>;
    let s: ScopedResourceStore<C>;
    beforeEach(async () => {
      t = 1_700_000_000_000;
      h = await make(clock);
      s = h.store;
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it('create answers the record: uuid id and version_id, a slug from the name, the scope, timestamps', async () => {
      const r = await s.create(draft('No Card Numbers!'));
      expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.version_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.version_id).not.toBe(r.id);
      expect(r).toEqual({
        id: r.id,
        slug: 'no-card-numbers',
        version_id: r.version_id,
        ...fixture.content('No Card Numbers!'),
        workspace_id: 'ws-a',
        created_at: '2023-11-14T22:13:20.000Z',
        last_updated_at: '2023-11-14T22:13:20.000Z',
      });
      expect(await s.get(r.id, WS_A)).toEqual(r);
      expect(await s.get('no-card-numbers', WS_A)).toEqual(r);
      expect(s.lookup('no-card-numbers')).toEqual(r);
    });

    it('slugs are URL-friendly: accents dropped, runs of other characters one dash, never empty', async () => {
      expect((await s.create(draft('  Ünïcode -- Façade  '))).slug).toBe('unicode-facade');
      expect((await s.create(draft('***'))).slug).toBe(fixture.label);
      expect((await s.create(draft('x'.repeat(200)))).slug).toBe('x'.repeat(60));
    });

    it('slugs are unique per scope: the same name again gets -2, -3; another workspace gets the plain slug', async () => {
      const a1 = await s.create(draft('PII'));
      const a2 = await s.create(draft('PII'));
      const a3 = await s.create(draft('pii'));
      const b1 = await s.create(draft('PII', WS_B));
      const o1 = await s.create(draft('PII', ORG));
      expect([a1.slug, a2.slug, a3.slug, b1.slug, o1.slug]).toEqual(['pii', 'pii-2', 'pii-3', 'pii', 'pii']);
      expect((await s.get('pii', WS_A))?.id).toBe(a1.id);
      expect((await s.get('pii-2', WS_A))?.id).toBe(a2.id);
      expect((await s.get('pii', WS_B))?.id).toBe(b1.id);
      expect((await s.get('pii', ORG))?.id).toBe(o1.id);
      // a slug freed by a delete can be taken again
      await s.delete(a1.id, WS_A);
      expect((await s.create(draft('PII'))).slug).toBe('pii');
    });

    it('an update adds a version: new version_id, same id and slug, the old version kept and addressable', async () => {
      const v1 = await s.create(draft('Cards'));
      const gen = s.generation();
      t += 60_000;
      const v2 = await s.update('cards', WS_A, change('Cards (strict)'));
      expect(s.generation()).not.toBe(gen);
      expect(v2).toMatchObject({ id: v1.id, slug: 'cards', ...change('Cards (strict)'), workspace_id: 'ws-a', created_at: v1.created_at });
      expect(v2!.version_id).not.toBe(v1.version_id);
      expect(v2!.last_updated_at).toBe('2023-11-14T22:14:20.000Z');
      expect(await s.get(v1.id, WS_A)).toEqual(v2);
      expect(await s.get(v1.id, WS_A, v1.version_id)).toEqual(v1);
      expect(await s.get('cards', WS_A, v2!.version_id)).toEqual(v2);
      expect(s.lookup('cards')).toEqual(v2);
      expect(s.lookup('cards', v1.version_id)).toEqual(v1);
      expect(s.lookup(v1.id, v1.version_id)).toMatchObject(fixture.content('Cards'));
      // the list shows the latest version once
      expect((await s.list(WS_A, page(10, 0))).data).toEqual([v2]);
    });

    it('an unknown id, slug or version is undefined; a version of another resource is not this one\'s', async () => {
      const a = await s.create(draft('A'));
      const b = await s.create(draft('B'));
      expect(await s.get('nope', WS_A)).toBeUndefined();
      expect(await s.get('00000000-0000-4000-8000-000000000000', WS_A)).toBeUndefined();
      expect(await s.get(a.id, WS_A, '00000000-0000-4000-8000-000000000000')).toBeUndefined();
      expect(await s.get(a.id, WS_A, b.version_id)).toBeUndefined();
      expect(s.lookup('nope')).toBeUndefined();
      expect(s.lookup(a.id, b.version_id)).toBeUndefined();
      expect(await s.update('nope', WS_A, change('x'))).toBeUndefined();
      expect(await s.delete('nope', WS_A)).toBeUndefined();
    });

    it('scope isolation: a workspace sees, updates and deletes only its own resources; unscoped sees all', async () => {
      const a = await s.create(draft('Mine'));
      const b = await s.create(draft('Theirs', WS_B));
      expect(await s.get(a.id, WS_B)).toBeUndefined();
      expect(await s.get('mine', WS_B)).toBeUndefined();
      expect(await s.get(a.id, WS_B, a.version_id)).toBeUndefined();
      expect(await s.update(a.id, WS_B, change('Hijack'))).toBeUndefined();
      expect(await s.delete(a.id, WS_B)).toBeUndefined();
      expect(await s.get(a.id, WS_A)).toEqual(a); // untouched
      expect((await s.list(WS_A, page(10, 0))).data.map((r) => r.id)).toEqual([a.id]);
      expect((await s.list(WS_B, page(10, 0))).data.map((r) => r.id)).toEqual([b.id]);
      expect((await s.list(ALL, page(10, 0))).data.map((r) => r.id)).toEqual([a.id, b.id]);
      expect(s.lookup(a.id, undefined, WS_B)).toBeUndefined();
      expect(s.lookup('theirs', undefined, WS_B)?.id).toBe(b.id);
      // an organisation-scoped caller sees its organisation's resources only
      const o = await s.create(draft('Org wide', ORG));
      expect((await s.list(ORG, page(10, 0))).data.map((r) => r.id)).toEqual([o.id]);
      expect(await s.get(a.id, ORG)).toBeUndefined();
      expect(await s.get(o.id, WS_A)).toBeUndefined();
    });

    it('unscoped, a slug resolves only when one scope has it; the id always resolves', async () => {
      const a = await s.create(draft('Shared name'));
      expect(s.lookup('shared-name')?.id).toBe(a.id);
      const b = await s.create(draft('Shared name', WS_B));
      expect(s.lookup('shared-name')).toBeUndefined();
      expect(await s.get('shared-name', ALL)).toBeUndefined();
      expect(s.lookup(b.id)?.id).toBe(b.id);
      expect(s.lookup('shared-name', undefined, WS_A)?.id).toBe(a.id);
    });

    it('list: filtered by workspace, oldest first, paginated; page_size 0 and a page past the end answer no items with the total', async () => {
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await s.create(draft(`g${i}`, i % 2 === 0 ? WS_A : WS_B)));
      const ids = (p: { data: { id: string }[] }) => p.data.map((r) => r.id);
      const inA = [made[0]!.id, made[2]!.id, made[4]!.id];
      expect(await s.list(ALL, { workspace_id: 'ws-a', ...page(10, 0) })).toEqual({ object: 'list', data: [made[0], made[2], made[4]], total: 3 });
      expect(ids(await s.list(ALL, { workspace_id: 'ws-a', ...page(2, 0) }))).toEqual(inA.slice(0, 2));
      expect(await s.list(ALL, { workspace_id: 'ws-a', ...page(2, 1) })).toEqual({ object: 'list', data: [made[4]], total: 3 });
      expect(await s.list(ALL, { workspace_id: 'ws-a', ...page(2, 2) })).toEqual({ object: 'list', data: [], total: 3 });
      expect(await s.list(ALL, { workspace_id: 'ws-a', ...page(0, 0) })).toEqual({ object: 'list', data: [], total: 3 });
      expect(await s.list(ALL, page(0, 5))).toEqual({ object: 'list', data: [], total: 5 });
      expect(ids(await s.list(ALL, page(3, 1)))).toEqual([made[3]!.id, made[4]!.id]);
      // a workspace filter naming another workspace than the caller's finds nothing
      expect(await s.list(WS_B, { workspace_id: 'ws-a', ...page(10, 0) })).toEqual({ object: 'list', data: [], total: 0 });
      expect(await s.list(ALL, { workspace_id: 'ws-none', ...page(10, 0) })).toEqual({ object: 'list', data: [], total: 0 });
    });

    it('delete removes the resource with every version; generation changes on each write', async () => {
      const g0 = s.generation();
      const v1 = await s.create(draft('Gone'));
      const g1 = s.generation();
      expect(g1).not.toBe(g0);
      const v2 = await s.update(v1.id, WS_A, change('Gone 2'));
      const g2 = s.generation();
      expect(g2).not.toBe(g1);
      expect(await s.delete('gone', WS_A)).toEqual(v2);
      expect(s.generation()).not.toBe(g2);
      expect(await s.get(v1.id, WS_A)).toBeUndefined();
      expect(await s.get(v1.id, WS_A, v1.version_id)).toBeUndefined();
      expect(s.lookup(v1.id, v2!.version_id)).toBeUndefined();
      expect((await s.list(WS_A, page(10, 0))).total).toBe(0);
      expect(await s.delete(v1.id, WS_A)).toBeUndefined();
    });

    it('declare: creates under the given id, leaves it alone while its content is the same, adds a version when it changes', async () => {
      const id = '6f1c2a34-5b6d-4e7f-8a9b-0c1d2e3f4a5b';
      const first = await s.declare(id, draft('Declared'));
      expect(first.outcome).toBe('created');
      expect(first.record).toEqual({ ...fixture.content('Declared'), id, slug: 'declared', version_id: first.record.version_id, workspace_id: 'ws-a', created_at: first.record.created_at, last_updated_at: first.record.created_at });
      expect(await s.get('declared', WS_A)).toEqual(first.record);
      t += 1000;
      expect(await s.declare(id, draft('Declared'))).toEqual({ record: first.record, outcome: 'unchanged' });
      expect(await s.get(id, WS_A)).toEqual(first.record);
      const changed = await s.declare(id, draft('Declared', WS_A, 'b'));
      expect(changed.outcome).toBe('updated');
      expect(changed.record).toMatchObject({ id, slug: 'declared', ...fixture.content('Declared', 'b'), created_at: first.record.created_at });
      expect(changed.record.version_id).not.toBe(first.record.version_id);
      expect(await s.get(id, WS_A, first.record.version_id)).toEqual(first.record);
      expect((await s.list(WS_A, page(10, 0))).total).toBe(1);
      // a declaration cannot move a resource to another scope
      await expect(s.declare(id, draft('Declared', WS_B))).rejects.toThrow(/another scope/);
      expect(await s.get(id, WS_A)).toEqual(changed.record);
    });

    it('a slug that would look like a uuid is prefixed, so ids and slugs never collide', async () => {
      const r = await s.create(draft('123e4567-e89b-42d3-a456-426614174000'));
      expect(r.slug).toBe(`${fixture.label[0]}-123e4567-e89b-42d3-a456-426614174000`);
      expect((await s.get(r.slug, WS_A))?.id).toBe(r.id);
    });
  });
}

/**
 * The contract on Redis (inside a describe with `sharedRedis()`): each test gets a store of its own
 * under a fresh prefix, closed and cleaned after it.
 */
export function redisResourceStoreContract<C extends { name: string }>(
  name: string,
  fixture: ResourceFixture<C>,
  redis: { readonly conn: RedisConnection; readonly runPrefix: string },
  make: (conn: RedisConnection, opts: ResourceStoreOptions & { prefix: string }) => RedisResourceStore<C>,
): void {
  let n = 0;
  resourceStoreContract(name, fixture, async (clock) => {
    const prefix = `${redis.runPrefix}${n++}:`;
    const store = make(redis.conn, { prefix, now: clock.now });
    await store.ready(3000);
    return {
      store,
      cleanup: async () => {
        store.close();
        await deleteByPrefix(redis.conn, prefix);
      },
    };
  });
}
