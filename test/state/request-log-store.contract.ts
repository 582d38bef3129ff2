import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RequestLogQuery, RequestLogRecord, RequestLogStore } from '../../src/state/request-log-store.js';

export interface RequestLogStoreHarness {
  store: RequestLogStore;
  /** Resolves once every append so far is visible to queries (Redis writes in the background). */
  settle(): Promise<void>;
  cleanup?(): Promise<void>;
}

const T0 = 1_700_000_000_000;

function rec(i: number, over: Partial<RequestLogRecord> = {}): RequestLogRecord {
  return { time: T0 + i * 1000, trace_id: `t-${i}`, method: 'POST', path: '/v1/chat/completions', status: 200, latency_ms: 1.5, ...over };
}

const q = (over: Partial<RequestLogQuery> = {}): RequestLogQuery => ({ scope: {}, page_size: 50, current_page: 0, ...over });
const traces = (p: { data: RequestLogRecord[] }) => p.data.map((r) => r.trace_id);

/** The behaviour every RequestLogStore shares, run against each adapter. `make(capacity)`. */
export function requestLogStoreContract(name: string, make: (capacity: number) => Promise<RequestLogStoreHarness>): void {
  describe(`RequestLogStore contract: ${name}`, () => {
    let h: RequestLogStoreHarness;
    let s: RequestLogStore;
    beforeEach(async () => {
      h = await make(5);
      s = h.store;
    });
    afterEach(async () => {
      await h.cleanup?.();
    });

    it('answers newest first, the record as appended; empty store: total 0', async () => {
      expect(await s.query(q())).toEqual({ object: 'list', data: [], total: 0 });
      const full = rec(1, {
        metadata: { _user: 'u1', n: 3, ok: true, none: null },
        key_name: 'team-a',
        workspace_id: 'ws-a',
        organisation_id: 'org-1',
        model: 'gpt-4o-mini',
        stream: true,
        attempts: 2,
        retries: 1,
        provider: 'openai',
        target: 'config.targets[1]',
        cache: 'MISS',
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
        cost: 0.0012,
        hooks: [{ id: 'h1', list: 'before_request_hooks', verdict: false, deny: true }],
        error: { code: 'upstream_error', status: 502, message: 'm' },
        client_aborted: true,
      });
      s.append(rec(0));
      s.append(full);
      await h.settle();
      const page = await s.query(q());
      expect(page.total).toBe(2);
      expect(page.data).toEqual([full, rec(0)]);
    });

    it('keeps only the newest `capacity` records', async () => {
      expect(s.capacity).toBe(5);
      for (let i = 0; i < 12; i++) s.append(rec(i));
      await h.settle();
      const page = await s.query(q());
      expect(page.total).toBe(5);
      expect(traces(page)).toEqual(['t-11', 't-10', 't-9', 't-8', 't-7']);
    });

    it('filters by trace id, exact status, status class and time range (both ends inclusive)', async () => {
      s.append(rec(0, { status: 200 }));
      s.append(rec(1, { status: 502 }));
      s.append(rec(2, { status: 499, client_aborted: true }));
      s.append(rec(3, { status: 503, trace_id: 't-1' }));
      await h.settle();
      expect(traces(await s.query(q({ trace_id: 't-1' })))).toEqual(['t-1', 't-1']);
      expect(traces(await s.query(q({ status: 502 })))).toEqual(['t-1']);
      expect(traces(await s.query(q({ status_class: 5 })))).toEqual(['t-1', 't-1']);
      expect(traces(await s.query(q({ status_class: 4 })))).toEqual(['t-2']);
      expect(traces(await s.query(q({ from: T0 + 1000, to: T0 + 2000 })))).toEqual(['t-2', 't-1']);
      expect(traces(await s.query(q({ from: T0 + 2001 })))).toEqual(['t-1']);
      expect((await s.query(q({ to: T0 - 1 }))).total).toBe(0);
      expect(traces(await s.query(q({ trace_id: 't-1', status_class: 5, from: T0 + 2500 })))).toEqual(['t-1']);
    });

    it('filters by metadata: every pair must match the value\'s text exactly', async () => {
      s.append(rec(0, { metadata: { _user: 'alice', env: 'prod' } }));
      s.append(rec(1, { metadata: { _user: 'bob', env: 'prod', n: 3, ok: false } }));
      s.append(rec(2));
      s.append(rec(3, { metadata: { _user: 'alice-2' } }));
      await h.settle();
      expect(traces(await s.query(q({ metadata: [['_user', 'alice']] })))).toEqual(['t-0']);
      expect(traces(await s.query(q({ metadata: [['env', 'prod']] })))).toEqual(['t-1', 't-0']);
      expect(traces(await s.query(q({ metadata: [['env', 'prod'], ['_user', 'bob']] })))).toEqual(['t-1']);
      expect(traces(await s.query(q({ metadata: [['n', '3'], ['ok', 'false']] })))).toEqual(['t-1']);
      expect((await s.query(q({ metadata: [['env', 'Prod']] }))).total).toBe(0);
      expect((await s.query(q({ metadata: [['toString', '']] }))).total).toBe(0);
    });

    it('scopes: a workspace sees its own records, an organisation its own, an empty scope all', async () => {
      s.append(rec(0, { workspace_id: 'ws-a', organisation_id: 'org-1' }));
      s.append(rec(1, { workspace_id: 'ws-b', organisation_id: 'org-1' }));
      s.append(rec(2, { workspace_id: 'ws-c', organisation_id: 'org-2' }));
      s.append(rec(3));
      await h.settle();
      expect(traces(await s.query(q({ scope: { workspace_id: 'ws-a', organisation_id: 'org-1' } })))).toEqual(['t-0']);
      // a workspace is an (organisation, workspace) pair: ws-a of another organisation, or of none, is another
      expect((await s.query(q({ scope: { workspace_id: 'ws-a' } }))).total).toBe(0);
      expect((await s.query(q({ scope: { workspace_id: 'ws-a', organisation_id: 'org-2' } }))).total).toBe(0);
      expect(traces(await s.query(q({ scope: { organisation_id: 'org-1' } })))).toEqual(['t-1', 't-0']);
      expect((await s.query(q())).total).toBe(4);
      expect(traces(await s.query(q({ workspace_id: 'ws-b' })))).toEqual(['t-1']);
      // the query's workspace_id cannot widen the scope
      expect((await s.query(q({ scope: { workspace_id: 'ws-a', organisation_id: 'org-1' }, workspace_id: 'ws-b' }))).total).toBe(0);
    });

    it('pages: page_size 0 answers only the total; the last page is short; past the end is empty', async () => {
      for (let i = 0; i < 5; i++) s.append(rec(i));
      await h.settle();
      expect(await s.query(q({ page_size: 0 }))).toEqual({ object: 'list', data: [], total: 5 });
      expect(traces(await s.query(q({ page_size: 2, current_page: 0 })))).toEqual(['t-4', 't-3']);
      expect(traces(await s.query(q({ page_size: 2, current_page: 1 })))).toEqual(['t-2', 't-1']);
      const last = await s.query(q({ page_size: 2, current_page: 2 }));
      expect([traces(last), last.total]).toEqual([['t-0'], 5]);
      expect(await s.query(q({ page_size: 2, current_page: 3 }))).toEqual({ object: 'list', data: [], total: 5 });
    });
  });
}
