import { describe, expect, it } from 'vitest';
import { MemoryUsageCounters } from '../../src/state/memory/usage-counters.js';
import { RedisUsageCounters } from '../../src/state/redis/usage-counters.js';
import { usageKeys } from '../../src/state/redis/usage-scripts.js';
import { fromUnits, periodOf, PERIOD_GRACE_MS, toUnits } from '../../src/state/usage-counters.js';
import { usageCountersContract } from './usage-counters.contract.js';
import { deleteByPrefix, sharedRedis } from './redis-test-utils.js';

usageCountersContract('MemoryUsageCounters', async (ttl) => ({ counters: new MemoryUsageCounters({ reservationTtlMs: ttl }) }));

describe('RedisUsageCounters (127.0.0.1:6379)', () => {
  const r = sharedRedis();
  let k = 0;
  usageCountersContract('RedisUsageCounters', async (ttl) => {
    const prefix = `${r.runPrefix}${k++}:`;
    return {
      counters: new RedisUsageCounters(r.conn, { prefix, reservationTtlMs: ttl }),
      other: new RedisUsageCounters(r.conn2, { prefix, reservationTtlMs: ttl }),
      cleanup: () => deleteByPrefix(r.conn, prefix),
    };
  });

  it('keeps each period in its own keys, expiring a day after the period ends; a period without reset never expires', async () => {
    const prefix = `${r.runPrefix}layout:`;
    const c = new RedisUsageCounters(r.conn, { prefix });
    const keys = usageKeys(prefix);
    const now = Date.now();
    const res = await c.reserve(
      [
        { policyId: 'pd', type: 'tokens', reset: 'daily', group: 'alice', estimate: 5, limit: 10, alertAt: null },
        { policyId: 'pn', type: 'cost', reset: null, group: '', estimate: 7, limit: 10, alertAt: null },
      ],
      now,
    );
    if (!res.ok) throw new Error('not admitted');
    const daily = `pd:tokens:${periodOf('daily', now).key}`;
    expect(await r.conn.client.hgetall(keys.counter(daily))).toEqual({ 'r:alice': '5' });
    expect(await r.conn.client.pexpiretime(keys.counter(daily))).toBe(periodOf('daily', now).end + PERIOD_GRACE_MS);
    expect(await r.conn.client.pexpiretime(keys.reservations(daily))).toBe(periodOf('daily', now).end + PERIOD_GRACE_MS);
    expect(await r.conn.client.pttl(keys.counter('pn:cost:all'))).toBe(-1);
    await c.settle(res.reservation, [{ actual: 3 }, { actual: 6 }], now);
    // the reserved field is removed once nothing is reserved; the reservation left the set
    expect(await r.conn.client.hgetall(keys.counter(daily))).toEqual({ 'u:alice': '3' });
    expect(await r.conn.client.zcard(keys.reservations(daily))).toBe(0);
    expect(await c.usage({ policyId: 'pn', type: 'cost', reset: null }, now)).toEqual({ '': 6 });
  });
});

describe('units and periods', () => {
  it('cost counts whole nano-dollars, so sums are exact', () => {
    expect(toUnits('cost', 0.1) + toUnits('cost', 0.2)).toBe(toUnits('cost', 0.3));
    expect(fromUnits('cost', toUnits('cost', 12.5))).toBe(12.5);
    expect(toUnits('tokens', 42)).toBe(42);
  });

  it('UTC boundaries: days from midnight, weeks from Monday, months from the 1st', () => {
    const wed = Date.UTC(2025, 0, 1, 23, 30); // Wednesday 1 January 2025
    expect(periodOf('daily', wed)).toEqual({ key: 'd2025-01-01', end: Date.UTC(2025, 0, 2) });
    expect(periodOf('weekly', wed)).toEqual({ key: 'w2024-12-30', end: Date.UTC(2025, 0, 6) });
    expect(periodOf('weekly', Date.UTC(2025, 0, 6))).toEqual({ key: 'w2025-01-06', end: Date.UTC(2025, 0, 13) });
    expect(periodOf('weekly', Date.UTC(2025, 0, 5, 23, 59))).toEqual({ key: 'w2024-12-30', end: Date.UTC(2025, 0, 6) });
    expect(periodOf('monthly', Date.UTC(2024, 1, 29, 12))).toEqual({ key: 'm2024-02', end: Date.UTC(2024, 2, 1) });
    expect(periodOf('monthly', Date.UTC(2024, 11, 31, 23, 59))).toEqual({ key: 'm2024-12', end: Date.UTC(2025, 0, 1) });
    expect(periodOf(null, wed)).toEqual({ key: 'all', end: Infinity });
  });
});
