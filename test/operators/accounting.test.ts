import { describe, expect, it } from 'vitest';
import { accounting, type Ledger, type UsageAccount } from '../../src/operators/accounting.js';
import { map, Subject } from 'rxjs';
import type { GatewayEvent } from '../../src/upstream/events.js';
import { newScheduler } from '../helpers/marbles.js';

const meta = { provider: 'openai', target: 'config', retries: 0 };
const usage = { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 };

describe('accounting', () => {
  it('keeps a JSON answer’s usage on the account and passes the event unchanged', () => {
    const account: UsageAccount = {};
    newScheduler().run(({ cold, expectObservable }) => {
      const json: GatewayEvent = { type: 'json', status: 200, body: {}, meta, usage };
      expectObservable(cold('a|', { a: json }).pipe(accounting({ account }))).toBe('a|', { a: json });
    });
    expect(account.usage).toEqual(usage);
  });

  it('takes the usage of the stream chunk that carries it, and errors pass through', () => {
    const scheduler = newScheduler();
    const account: UsageAccount = {};
    scheduler.run(({ cold, expectObservable }) => {
      const events: Record<string, GatewayEvent> = {
        s: { type: 'stream-start', meta },
        c: { type: 'chunk', data: '{"x":1}' },
        u: { type: 'chunk', data: '', usage },
      };
      expectObservable(cold('scu#', events).pipe(accounting({ account }))).toBe('scu#', events);
    });
    expect(account.usage).toEqual(usage);
  });

  it('leaves the account alone when no usage came', () => {
    const account: UsageAccount = {};
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a|', { a: { type: 'chunk', data: 'x' } as GatewayEvent }).pipe(accounting({ account }))).toBe('a|', { a: { type: 'chunk', data: 'x' } });
    });
    expect(account.usage).toBeUndefined();
  });

  it('with a ledger: prices a JSON answer before passing it on, and ends once however the answer ends (complete, error, unsubscribe)', () => {
    const ends: string[] = [];
    const ledger: Ledger<UsageAccount & { id: string }> = { cost: (a) => (a.usage ? 0.5 : undefined), end: (a) => void ends.push(a.id) };
    const a = { id: 'json' } as UsageAccount & { id: string };
    newScheduler().run(({ cold, expectObservable }) => {
      const json: GatewayEvent = { type: 'json', status: 200, body: {}, meta, usage };
      // the cost is on the account when the answer reaches the next stage (the response headers carry it)
      expectObservable(cold('a|', { a: json }).pipe(accounting({ account: a, ledger }), map(() => a.cost))).toBe('x|', { x: 0.5 });
      expectObservable(cold<GatewayEvent>('#').pipe(accounting({ account: { id: 'error' } as UsageAccount & { id: string }, ledger }))).toBe('#');
    });
    expect(a.cost).toBe(0.5);
    const upstream = new Subject<GatewayEvent>();
    const sub = upstream.pipe(accounting({ account: { id: 'cancelled' } as UsageAccount & { id: string }, ledger })).subscribe();
    upstream.next({ type: 'stream-start', meta });
    sub.unsubscribe();
    expect(ends.sort()).toEqual(['cancelled', 'error', 'json']);
  });

  it('with a ledger that counts asynchronously: a JSON answer, a stream\'s end and an error pass on only once the count landed', async () => {
    const landed: (() => void)[] = [];
    const ledger: Ledger<UsageAccount> = { cost: () => 0.5, end: () => new Promise<void>((r) => landed.push(r)) };
    const flush = () => new Promise((r) => setImmediate(r));
    const json: GatewayEvent = { type: 'json', status: 200, body: {}, meta, usage };
    const cases: [string, (s: Subject<GatewayEvent>) => void][] = [
      ['json', (s) => (s.next(json), s.complete())],
      ['stream', (s) => (s.next({ type: 'stream-start', meta }), s.next({ type: 'chunk', data: 'x' }), s.complete())],
      ['error', (s) => s.error(new Error('upstream'))],
    ];
    for (const [name, drive] of cases) {
      const seen: string[] = [];
      const upstream = new Subject<GatewayEvent>();
      upstream.pipe(accounting({ account: {}, ledger })).subscribe({ next: (e) => seen.push(e.type), error: () => seen.push('error'), complete: () => seen.push('complete') });
      drive(upstream);
      await flush();
      const before = [...seen];
      landed.shift()!();
      await flush();
      if (name === 'json') expect([before, seen]).toEqual([[], ['json', 'complete']]);
      if (name === 'stream') expect([before, seen]).toEqual([['stream-start', 'chunk'], ['stream-start', 'chunk', 'complete']]);
      if (name === 'error') expect([before, seen]).toEqual([[], ['error']]);
    }
    // a client that left: counted, nothing waits
    const upstream = new Subject<GatewayEvent>();
    upstream.pipe(accounting({ account: {}, ledger })).subscribe().unsubscribe();
    expect(landed).toHaveLength(1);
  });
});
