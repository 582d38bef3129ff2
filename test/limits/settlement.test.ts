/**
 * Settlement on its own: a settle the counters take raises its alerts; one they refuse (unreachable)
 * is tried again every interval until they take it, counted once, and the retries stop when asked.
 * The memory counters are the real ones; only their availability is switched.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Settlement } from '../../src/limits/settlement.js';
import type { Held } from '../../src/limits/types.js';
import { MemoryUsageCounters } from '../../src/state/memory/usage-counters.js';
import type { Reservation, UsageAlert } from '../../src/state/usage-counters.js';

const NOW = Date.UTC(2031, 0, 1);
const scope = { policyId: 'p-1', type: 'tokens' as const, reset: null };

/** Memory counters whose settles fail while `down` is set; `tries` counts every settle asked of them. */
function flaky() {
  const counters = new MemoryUsageCounters();
  const state = { down: true, tries: 0 };
  const settle = (r: Reservation, actual: Parameters<MemoryUsageCounters['settle']>[1], now: number): Promise<UsageAlert[]> => {
    state.tries++;
    return state.down ? Promise.reject(new Error('ECONNREFUSED')) : counters.settle(r, actual, now);
  };
  return { counters, state, flakyCounters: { settle } };
}

async function reserve(counters: MemoryUsageCounters, alertAt: number | null = null): Promise<Reservation> {
  const out = await counters.reserve([{ ...scope, group: '', estimate: 10, limit: 100, alertAt }], NOW);
  if (!out.ok) throw new Error('not reserved');
  return out.reservation;
}

const held = [{ policy: {}, estimate: 10 }] as unknown as Held[];

describe('settlement', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('a settle the counters take raises its alerts', async () => {
    const counters = new MemoryUsageCounters();
    const raised: unknown[][] = [];
    const settlement = new Settlement({ counters, alerts: { raise: (...args) => void raised.push(args) }, now: () => NOW });
    const reservation = await reserve(counters, 5);
    await settlement.settle({ reservation, actual: [{ actual: 7 }], held, scope: { name: 'k' } });
    expect(raised).toHaveLength(1);
    expect(raised[0]![0]).toMatchObject([{ item: 0, group: '', used: 7 }]);
    expect(await counters.usage(scope, NOW)).toEqual({ '': 7 });
  });

  it('a settle the counters refuse is tried again every interval until taken, and counted once', async () => {
    const { counters, state, flakyCounters } = flaky();
    const settlement = new Settlement({ counters: flakyCounters, alerts: { raise() {} }, now: () => NOW, retryIntervalMs: 1000 });
    const reservation = await reserve(counters);
    await settlement.settle({ reservation, actual: [{ actual: 7 }], held, scope: undefined });
    expect(state.tries).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(state.tries).toBe(2);
    state.down = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(state.tries).toBe(3);
    expect(await counters.usage(scope, NOW)).toEqual({ '': 7 });
    // nothing is left to retry: the timer goes once the queue is empty
    await vi.advanceTimersByTimeAsync(5000);
    expect(state.tries).toBe(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stop() ends the retries', async () => {
    const { counters, state, flakyCounters } = flaky();
    const settlement = new Settlement({ counters: flakyCounters, alerts: { raise() {} }, now: () => NOW, retryIntervalMs: 1000 });
    await settlement.settle({ reservation: await reserve(counters), actual: [{ actual: 7 }], held, scope: undefined });
    settlement.stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(state.tries).toBe(1);
  });
});
