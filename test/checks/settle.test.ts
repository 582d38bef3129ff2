import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ResolvedCheck } from '../../src/checks/registry.js';
import { settleCheck } from '../../src/checks/settle.js';
import { isLater, later } from '../../src/util/now-or-later.js';
import type { CheckDef } from '../../src/checks/types.js';
import { chatRequest, deps } from './_helpers.js';

/** The settled result, awaited. */
const settled = (...args: Parameters<typeof settleCheck>) => firstValueFrom(later(settleCheck(...args)));

/** A test check; `io` (default true) makes it one that waits on I/O: signal and time limit. */
const resolved = (run: CheckDef<object>['run'], io = true): ResolvedCheck => ({
  id: 'default.test',
  def: { id: 'test', params: z.object({}), run, ...(io ? { io: true } : {}) } as CheckDef<unknown>,
  params: {},
  not: false,
  path: 'p',
});

describe('settleCheck', () => {
  it('a pass or a fail is kept with its data and whether it transformed', async () => {
    const r = await settled(resolved(() => ({ verdict: false, data: { n: 1 }, transformed: { request: { body: {} } } })), chatRequest('x'), deps());
    expect(r.result).toMatchObject({ id: 'default.test', verdict: false, data: { n: 1 }, error: null, transformed: true });
    expect(r.outcome?.transformed).toEqual({ request: { body: {} } });
  });

  it('a throw or a rejection is a failed check with error (fail closed)', async () => {
    const sync = await settled(resolved(() => { throw new Error('boom'); }), chatRequest('x'), deps());
    expect(sync.result).toMatchObject({ verdict: false, error: 'boom', data: null });
    const async = await settled(resolved(() => Promise.reject(new Error('later'))), chatRequest('x'), deps());
    expect(async.result).toMatchObject({ verdict: false, error: 'later' });
    expect(async.outcome).toBeUndefined();
  });

  it('fail_on_error: false turns an error into a pass that still reports it', async () => {
    const r = await settled(resolved(() => { throw new Error('boom'); }), chatRequest('x'), deps(), { failOnError: false });
    expect(r.result).toMatchObject({ verdict: true, error: 'boom' });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('a computation check (no io) runs with no timer and a signal that never aborts', async () => {
    vi.useFakeTimers();
    let seen: AbortSignal | undefined;
    const r = await settled(
      resolved((_i, _p, _d, signal) => {
        seen = signal;
        return { verdict: true };
      }, false),
      chatRequest('x'),
      deps(),
      { timeoutMs: 5 },
    );
    expect(vi.getTimerCount()).toBe(0);
    expect(r.result).toMatchObject({ verdict: true, error: null });
    expect(seen?.aborted).toBe(false);
    const thrown = await settled(resolved(() => { throw new Error('boom'); }, false), chatRequest('x'), deps());
    expect(thrown.result).toMatchObject({ verdict: false, error: 'boom' });
    vi.useRealTimers();
  });

  it('the time limit fails a check that never answers, and aborts its signal (virtual time)', async () => {
    vi.useFakeTimers();
    let seen: AbortSignal | undefined;
    const pending = settled(
      resolved((_i, _p, _d, signal) => {
        seen = signal;
        return new Promise(() => {});
      }),
      chatRequest('x'),
      deps(),
      { timeoutMs: 5_000 },
    );
    await vi.advanceTimersByTimeAsync(4_999);
    expect(seen?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const r = await pending;
    expect(r.result).toMatchObject({ verdict: false, error: 'timed out after 5000 ms' });
    expect(seen?.aborted).toBe(true);
  });

  it('the request signal aborts the check', async () => {
    const ac = new AbortController();
    const p = settled(
      resolved((_i, _p, _d, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('client gone'))))),
      chatRequest('x'),
      deps(),
      { signal: ac.signal },
    );
    ac.abort();
    expect((await p).result).toMatchObject({ verdict: false, error: 'client gone' });
  });

  it('a computation check answers at once; an I/O check is an Observable that runs when subscribed', () => {
    const now = settleCheck(resolved(() => ({ verdict: true }), false), chatRequest('x'), deps());
    expect(isLater(now)).toBe(false);
    expect(now).toMatchObject({ result: { verdict: true } });
    let runs = 0;
    const io = settleCheck(resolved(() => ({ verdict: (runs += 1) > 0 })), chatRequest('x'), deps());
    expect([isLater(io), runs]).toEqual([true, 0]);
  });

  it('unsubscribed before it answered, the check is aborted; once it answered, it is not', async () => {
    const signals: AbortSignal[] = [];
    const check = resolved((_i, _p, _d, signal) => {
      signals.push(signal);
      return signals.length === 1 ? new Promise(() => {}) : { verdict: true };
    });
    later(settleCheck(check, chatRequest('x'), deps())).subscribe().unsubscribe();
    expect(signals[0]?.aborted).toBe(true);
    await settled(check, chatRequest('x'), deps());
    expect(signals[1]?.aborted).toBe(false);
  });
});
