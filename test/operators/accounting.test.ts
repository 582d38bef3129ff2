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
      expectObservable(cold('a|', { a: json }).pipe(accounting(account))).toBe('a|', { a: json });
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
      expectObservable(cold('scu#', events).pipe(accounting(account))).toBe('scu#', events);
    });
    expect(account.usage).toEqual(usage);
  });

  it('leaves the account alone when no usage came', () => {
    const account: UsageAccount = {};
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a|', { a: { type: 'chunk', data: 'x' } as GatewayEvent }).pipe(accounting(account))).toBe('a|', { a: { type: 'chunk', data: 'x' } });
    });
    expect(account.usage).toBeUndefined();
  });

  it('with a ledger: prices a JSON answer before passing it on, and ends once however the answer ends (complete, error, unsubscribe)', () => {
    const ends: string[] = [];
    const ledger: Ledger<UsageAccount & { id: string }> = { cost: (a) => (a.usage ? 0.5 : undefined), end: (a) => ends.push(a.id) };
    const a = { id: 'json' } as UsageAccount & { id: string };
    newScheduler().run(({ cold, expectObservable }) => {
      const json: GatewayEvent = { type: 'json', status: 200, body: {}, meta, usage };
      // the cost is on the account when the answer reaches the next stage (the response headers carry it)
      expectObservable(cold('a|', { a: json }).pipe(accounting(a, ledger), map(() => a.cost))).toBe('x|', { x: 0.5 });
      expectObservable(cold<GatewayEvent>('#').pipe(accounting({ id: 'error' } as UsageAccount & { id: string }, ledger))).toBe('#');
    });
    expect(a.cost).toBe(0.5);
    const upstream = new Subject<GatewayEvent>();
    const sub = upstream.pipe(accounting({ id: 'cancelled' } as UsageAccount & { id: string }, ledger)).subscribe();
    upstream.next({ type: 'stream-start', meta });
    sub.unsubscribe();
    expect(ends.sort()).toEqual(['cancelled', 'error', 'json']);
  });
});
