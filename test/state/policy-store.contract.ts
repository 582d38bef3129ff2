import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PolicyDraft, PolicyStore } from '../../src/state/policy-store.js';

export interface PolicyStoreHarness {
  store: PolicyStore;
  cleanup?(): Promise<void>;
}

// a workspace is an (organisation, workspace) pair: callers name both
const WS_A = { workspace_id: 'ws-a', organisation_id: 'org-1' };
const WS_B = { workspace_id: 'ws-b', organisation_id: 'org-1' };
const WS_B2 = { workspace_id: 'ws-b', organisation_id: 'org-2' };
const ORG = { organisation_id: 'org-1' };
const ALL = {};
const T0 = 1_700_000_000_000;

function draft(name: string, over: Partial<PolicyDraft> = {}): PolicyDraft {
  return {
    name,
    type: 'tokens',
    status: 'active',
    conditions: [{ key: 'model', value: 'gpt-4o-mini' }],
    group_by: [{ key: 'metadata._user' }],
    credit_limit: 1000,
    alert_threshold: 800,
    periodic_reset: 'monthly',
    workspace_id: 'ws-a',
    organisation_id: 'org-1',
    ...over,
  };
}

const q = (over: Record<string, unknown> = {}) => ({ page_size: 50, current_page: 0, ...over });
const names = (p: { data: { name: string }[] }) => p.data.map((r) => r.name);

/** The behaviour every PolicyStore shares, run against each adapter. */
export function policyStoreContract(name: string, make: (clock: { now(): number }) => Promise<PolicyStoreHarness>): void {
  describe(`PolicyStore contract: ${name}`, () => {
    let t = T0;
    const clock = { now: () => t };
    let h: PolicyStoreHarness;
    let s: PolicyStore;
    beforeEach(async () => {
      t = T0;
      h = await make(clock);
      s = h.store;
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it('create answers every field of the record, in its order: uuid id, timestamps, an empty usage map', async () => {
      const p = await s.create(draft('Team tokens'));
      expect(p.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(Object.keys(p)).toEqual([
        'id', 'type', 'status', 'workspace_id', 'organisation_id', 'created_at', 'last_updated_at', 'name',
        'conditions', 'group_by', 'credit_limit', 'alert_threshold', 'periodic_reset', 'value_key_usage_map',
      ]);
      expect(p).toMatchObject({
        type: 'tokens',
        status: 'active',
        workspace_id: 'ws-a',
        organisation_id: 'org-1',
        created_at: '2023-11-14T22:13:20.000Z',
        last_updated_at: '2023-11-14T22:13:20.000Z',
        credit_limit: 1000,
        alert_threshold: 800,
        periodic_reset: 'monthly',
        value_key_usage_map: {},
      });
      expect(await s.get(p.id, WS_A)).toEqual(p);
      expect(await s.get(p.id.toUpperCase(), WS_A)).toEqual(p);
    });

    it('active() lists the active policies of every scope; generation() moves on each write', async () => {
      const g0 = s.generation();
      const a = await s.create(draft('A'));
      const b = await s.create(draft('B', { workspace_id: 'ws-b', organisation_id: 'org-2', status: 'archived' }));
      const o = await s.create(draft('Org wide', { workspace_id: null }));
      expect(s.generation()).toBeGreaterThan(g0);
      expect(s.active().map((p) => p.name).sort()).toEqual(['A', 'Org wide']);
      const g1 = s.generation();
      await s.archive(a.id, ALL);
      expect(s.generation()).toBeGreaterThan(g1);
      expect(s.active().map((p) => p.id)).toEqual([o.id]);
      await s.update(b.id, ALL, { ...draft('B'), status: 'active' });
      expect(s.active().map((p) => p.id).sort()).toEqual([b.id, o.id].sort());
    });

    it('answers copies: changing an answer does not change the store', async () => {
      const p = await s.create(draft('Copy'));
      p.conditions.push({ key: 'provider', value: 'openai' });
      p.name = 'changed';
      const again = await s.get(p.id, ALL);
      expect(again?.name).toBe('Copy');
      expect(again?.conditions).toHaveLength(1);
    });

    it('scoping: a workspace sees its own, an organisation its workspaces\', no scope sees all', async () => {
      const a = await s.create(draft('A'));
      const b = await s.create(draft('B', { workspace_id: 'ws-b', organisation_id: 'org-2' }));
      const o = await s.create(draft('Org wide', { workspace_id: null }));
      expect(await s.get(a.id, WS_B)).toBeUndefined();
      expect(await s.get(b.id, WS_A)).toBeUndefined();
      expect(await s.get(o.id, WS_A)).toBeUndefined();
      // the same workspace id in another organisation, or in none, is another workspace
      expect(await s.get(a.id, { workspace_id: 'ws-a', organisation_id: 'org-2' })).toBeUndefined();
      expect(await s.get(a.id, { workspace_id: 'ws-a' })).toBeUndefined();
      expect(await s.get(b.id, WS_B)).toBeUndefined();
      expect(await s.get(b.id, WS_B2)).toEqual(b);
      expect(await s.get(a.id, ORG)).toEqual(a);
      expect(await s.get(o.id, ORG)).toEqual(o);
      expect(names(await s.list(WS_A, q()))).toEqual(['A']);
      expect(names(await s.list(WS_B, q()))).toEqual([]);
      expect(names(await s.list(WS_B2, q()))).toEqual(['B']);
      expect(names(await s.list(ORG, q()))).toEqual(['A', 'Org wide']);
      expect(names(await s.list(ALL, q()))).toEqual(['A', 'B', 'Org wide']);
      // a workspace filter outside the caller's scope finds nothing
      expect(await s.list(WS_A, q({ workspace_id: 'ws-b' }))).toEqual({ object: 'list', data: [], total: 0 });
      // unknown and malformed ids are simply unknown
      expect(await s.get('00000000-0000-4000-8000-000000000000', ALL)).toBeUndefined();
      expect(await s.get('not-a-uuid', ALL)).toBeUndefined();
    });

    it('list filters by workspace, status and type; total counts every match; oldest first', async () => {
      await s.create(draft('t1'));
      await s.create(draft('c1', { type: 'cost', credit_limit: 5 }));
      await s.create(draft('t2', { workspace_id: 'ws-b' }));
      const archived = await s.create(draft('t3'));
      await s.archive(archived.id, ALL);
      expect(names(await s.list(ALL, q({ type: 'tokens' })))).toEqual(['t1', 't2', 't3']);
      expect(names(await s.list(ALL, q({ type: 'cost' })))).toEqual(['c1']);
      expect(names(await s.list(ALL, q({ status: 'archived' })))).toEqual(['t3']);
      expect(names(await s.list(ALL, q({ status: 'active', workspace_id: 'ws-a' })))).toEqual(['t1', 'c1']);
      expect((await s.list(ALL, q({ status: 'active', type: 'tokens', workspace_id: 'ws-a' }))).total).toBe(1);
    });

    it('pagination: page_size 0 answers only the total; a page past the end is empty with the total', async () => {
      for (const n of ['p1', 'p2', 'p3', 'p4', 'p5']) await s.create(draft(n));
      expect(await s.list(ALL, q({ page_size: 0 }))).toEqual({ object: 'list', data: [], total: 5 });
      expect(names(await s.list(ALL, q({ page_size: 2, current_page: 0 })))).toEqual(['p1', 'p2']);
      expect(names(await s.list(ALL, q({ page_size: 2, current_page: 2 })))).toEqual(['p5']);
      expect(await s.list(ALL, q({ page_size: 2, current_page: 3 }))).toEqual({ object: 'list', data: [], total: 5 });
    });

    it('update replaces the definition; id, scope, created_at stay; last_updated_at moves', async () => {
      const p = await s.create(draft('Before'));
      t += 60_000;
      const u = await s.update(p.id, WS_A, { ...draft('After'), conditions: [], group_by: [], credit_limit: 5, alert_threshold: null, periodic_reset: null });
      expect(u).toEqual({
        ...p,
        name: 'After',
        conditions: [],
        group_by: [],
        credit_limit: 5,
        alert_threshold: null,
        periodic_reset: null,
        last_updated_at: '2023-11-14T22:14:20.000Z',
      });
      expect(await s.get(p.id, ALL)).toEqual(u);
      expect(await s.update(p.id, WS_B, draft('Nope'))).toBeUndefined();
      expect((await s.get(p.id, ALL))?.name).toBe('After');
    });

    it('archive sets status archived once (again: unchanged); the policy stays readable and listed', async () => {
      const p = await s.create(draft('Old'));
      t += 1000;
      const a = await s.archive(p.id, WS_A);
      expect(a).toEqual({ ...p, status: 'archived', last_updated_at: '2023-11-14T22:13:21.000Z' });
      t += 1000;
      expect(await s.archive(p.id, WS_A)).toEqual(a);
      expect(await s.get(p.id, WS_A)).toEqual(a);
      expect((await s.list(WS_A, q())).total).toBe(1);
      expect(await s.archive(p.id, WS_B)).toBeUndefined();
      // an update can make it active again
      expect((await s.update(p.id, WS_A, { ...draft('Old'), status: 'active' }))?.status).toBe('active');
    });

    it('declare creates with the given id, then is idempotent; a changed declaration is applied', async () => {
      const id = '5b0d6a52-4f0e-4c8e-9d59-0c6f1c2b7a10';
      const d = { ...draft('Declared'), id };
      const first = await s.declare(d);
      expect(first.id).toBe(id);
      expect(first.created_at).toBe('2023-11-14T22:13:20.000Z');
      t += 5000;
      expect(await s.declare(d)).toEqual(first);
      expect((await s.list(ALL, q())).total).toBe(1);
      const moved = await s.declare({ ...d, credit_limit: 2000, workspace_id: 'ws-b' });
      expect(moved).toEqual({ ...first, credit_limit: 2000, workspace_id: 'ws-b', last_updated_at: '2023-11-14T22:13:25.000Z' });
      expect(await s.get(id, WS_A)).toBeUndefined();
      expect(await s.get(id.toUpperCase(), WS_B)).toEqual(moved);
    });
  });
}
