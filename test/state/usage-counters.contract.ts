import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { periodOf, type ReserveItem, type UsageCounters } from '../../src/state/usage-counters.js';

export interface UsageCountersHarness {
  counters: UsageCounters;
  /** A second handle on the same counters (another instance), when the adapter has one. */
  other?: UsageCounters;
  cleanup?(): Promise<void>;
}

/** 2031-05-14 (a Wednesday) 12:00 UTC: in the future, as Redis expires keys by its own clock. */
const T0 = Date.UTC(2031, 4, 14, 12);
const HOUR = 3600_000;
const DAY = 24 * HOUR;

let n = 0;
const item = (over: Partial<ReserveItem> = {}): ReserveItem => ({
  policyId: `p-${n}`,
  type: 'tokens',
  reset: 'daily',
  group: 'alice',
  estimate: 10,
  limit: 100,
  alertAt: null,
  ...over,
});

/** The behaviour every UsageCounters adapter shares (run on memory and Redis). */
export function usageCountersContract(name: string, make: (ttlMs: number) => Promise<UsageCountersHarness>): void {
  describe(`UsageCounters contract: ${name}`, () => {
    const TTL = 15 * 60_000;
    let h: UsageCountersHarness;
    let c: UsageCounters;
    beforeEach(async () => {
      n++;
      h = await make(TTL);
      c = h.counters;
    });
    afterEach(async () => {
      await h.cleanup?.();
    });
    const used = (over: Partial<ReserveItem> = {}, now = T0) => c.usage({ policyId: item(over).policyId, type: item(over).type, reset: item(over).reset }, now);

    it('admits while used + reserved < limit, whatever the estimate, then refuses naming the item, used and reserved', async () => {
      expect((await c.reserve([item({ estimate: 60 })], T0)).ok).toBe(true);
      expect((await c.reserve([item({ estimate: 39 })], T0)).ok).toBe(true); // 99 held: 1 left
      // an estimate larger than what is left is admitted while something is left: it holds all of it
      expect((await c.reserve([item({ estimate: 500 })], T0)).ok).toBe(true);
      const refused = await c.reserve([item({ estimate: 0 })], T0);
      expect(refused).toEqual({ ok: false, refused: 0, used: 0, reserved: 599, periodEnd: Date.UTC(2031, 4, 15) });
      // another group has its own counter; an estimate larger than the whole limit is admitted on a fresh one
      expect((await c.reserve([item({ group: 'bob', estimate: 101 })], T0)).ok).toBe(true);
      expect((await c.reserve([item({ group: 'bob', estimate: 1 })], T0)).ok).toBe(false);
    });

    it('one request at a time: admitted until usage reaches the limit (limit 42, estimates of 1,029, 20 used each)', async () => {
      const edge = (estimate: number) => item({ limit: 42, estimate });
      for (const before of [0, 20, 40]) {
        const r = await c.reserve([edge(1029)], T0);
        if (!r.ok) throw new Error(`not admitted at ${before} used`);
        await c.settle(r.reservation, [{ actual: 20 }], T0);
      }
      expect(await used()).toEqual({ alice: 60 });
      expect(await c.reserve([edge(1029)], T0)).toEqual({ ok: false, refused: 0, used: 60, reserved: 0, periodEnd: Date.UTC(2031, 4, 15) });
    });

    it('settle replaces the estimate with the real usage; release frees it; both are idempotent', async () => {
      const a = await c.reserve([item({ estimate: 50 })], T0);
      const b = await c.reserve([item({ estimate: 50 })], T0);
      if (!a.ok || !b.ok) throw new Error('not admitted');
      expect(await c.reserve([item({ estimate: 1 })], T0)).toMatchObject({ ok: false, used: 0, reserved: 100 });
      await c.settle(a.reservation, [{ actual: 30 }], T0);
      await c.settle(a.reservation, [{ actual: 30 }], T0); // again: nothing more
      await c.release(a.reservation, T0);
      expect(await used()).toEqual({ alice: 30 });
      // 30 used + 50 reserved: the estimate of a is given back, so 20 are left
      const d = await c.reserve([item({ estimate: 21 })], T0);
      if (!d.ok) throw new Error('not admitted');
      expect(await c.reserve([item({ estimate: 1 })], T0)).toMatchObject({ ok: false, used: 30, reserved: 71 });
      await c.release(d.reservation, T0);
      await c.release(b.reservation, T0);
      await c.settle(b.reservation, [{ actual: 99 }], T0); // released before: counts nothing
      expect(await used()).toEqual({ alice: 30 });
      expect(await c.reserve([item({ estimate: 70 })], T0)).toMatchObject({ ok: true });
      expect(await c.reserve([item({ estimate: 1 })], T0)).toMatchObject({ ok: false, used: 30, reserved: 70 });
    });

    it('reserves on several policies all or nothing', async () => {
      const tight = item({ policyId: `tight-${n}`, estimate: 5, limit: 5 });
      const roomy = item({ policyId: `roomy-${n}`, estimate: 10, limit: 10 });
      expect((await c.reserve([tight], T0)).ok).toBe(true); // tight is now full
      const r = await c.reserve([roomy, tight], T0);
      expect(r).toMatchObject({ ok: false, refused: 1, used: 0, reserved: 5 });
      // nothing was held on the roomy policy: one reservation holds 10 there, not 20
      expect((await c.reserve([roomy], T0)).ok).toBe(true);
      expect(await c.reserve([roomy], T0)).toMatchObject({ ok: false, refused: 0, used: 0, reserved: 10 });
    });

    it('a settle may count under another group (the target that answered), freeing the reserved one', async () => {
      const r = await c.reserve([item({ group: 'openai', estimate: 100 })], T0);
      if (!r.ok) throw new Error('not admitted');
      await c.settle(r.reservation, [{ actual: 7, group: 'anthropic' }], T0);
      expect(await used()).toEqual({ anthropic: 7 });
      expect((await c.reserve([item({ group: 'openai', estimate: 100 })], T0)).ok).toBe(true);
    });

    it('periods: a new day, week or month starts from zero (UTC boundaries); no reset never does', async () => {
      for (const reset of ['daily', 'weekly', 'monthly', null] as const) {
        const it0 = item({ reset, policyId: `per-${n}-${reset}`, estimate: 100 });
        const r = await c.reserve([it0], T0);
        if (!r.ok) throw new Error('not admitted');
        await c.settle(r.reservation, [{ actual: 100 }], T0);
        expect((await c.reserve([{ ...it0, estimate: 1 }], T0)).ok).toBe(false);
      }
      // the usage read follows the period of `now`
      expect(await c.usage({ policyId: `per-${n}-daily`, type: 'tokens', reset: 'daily' }, T0)).toEqual({ alice: 100 });
      expect(await c.usage({ policyId: `per-${n}-daily`, type: 'tokens', reset: 'daily' }, T0 + DAY)).toEqual({});
      const fits = async (reset: 'daily' | 'weekly' | 'monthly' | null, at: number) =>
        (await c.reserve([item({ reset, policyId: `per-${n}-${reset}`, estimate: 1 })], at)).ok;
      // 11:59:59 the same day: still the same period for all
      const endOfDay = Date.UTC(2031, 4, 14, 23, 59, 59, 999);
      expect([await fits('daily', endOfDay), await fits('weekly', endOfDay), await fits('monthly', endOfDay)]).toEqual([false, false, false]);
      // Thursday 00:00 UTC: a new day only
      const thursday = Date.UTC(2031, 4, 15);
      expect([await fits('daily', thursday), await fits('weekly', thursday), await fits('monthly', thursday)]).toEqual([true, false, false]);
      // Monday 19 May 00:00 UTC: a new week
      expect(await fits('weekly', Date.UTC(2031, 4, 19))).toBe(true);
      // 1 June 00:00 UTC: a new month
      expect(await fits('monthly', Date.UTC(2031, 4, 31, 23, 59))).toBe(false);
      expect(await fits('monthly', Date.UTC(2031, 5, 1))).toBe(true);
      // never reset: a year later, still spent
      expect(await fits(null, T0 + 365 * DAY)).toBe(false);
    });

    it('an alert fires once per period and group, when usage reaches the threshold', async () => {
      const it0 = item({ alertAt: 80, estimate: 5, limit: 1000 });
      const settle = async (actual: number, over: Partial<ReserveItem> = {}, at = T0) => {
        const r = await c.reserve([{ ...it0, ...over }], at);
        if (!r.ok) throw new Error('not admitted');
        return c.settle(r.reservation, [{ actual }], at);
      };
      expect(await settle(50)).toEqual([]);
      const [alert] = await settle(30); // 80: reached
      expect(alert).toEqual({ item: 0, group: 'alice', used: 80, period: periodOf('daily', T0) });
      expect(await settle(5)).toEqual([]); // past it: not again
      expect(await settle(90, { group: 'bob' })).toMatchObject([{ group: 'bob', used: 90 }]);
      // the next day: a new period, a new alert
      expect(await settle(85, {}, T0 + DAY)).toMatchObject([{ group: 'alice', used: 85 }]);
    });

    it('an unsettled reservation expires (its holder died): it stops holding; a late settle still counts once', async () => {
      const r = await c.reserve([item({ estimate: 100 })], T0);
      if (!r.ok) throw new Error('not admitted');
      expect((await c.reserve([item({ estimate: 1 })], T0 + TTL - 1)).ok).toBe(false);
      // past its expiry the estimate is released by the next reservation's look
      const later = await c.reserve([item({ estimate: 60 })], T0 + TTL + 1);
      expect(later.ok).toBe(true);
      await c.settle(r.reservation, [{ actual: 40 }], T0 + TTL + 2);
      await c.settle(r.reservation, [{ actual: 40 }], T0 + TTL + 3);
      expect(await used({}, T0 + TTL)).toEqual({ alice: 40 });
      // 40 used + 60 reserved
      expect((await c.reserve([item({ estimate: 1 })], T0 + TTL + 4)).ok).toBe(false);
    });

    it('50 concurrent reservations of 30 against a limit of 100: exactly 4 are admitted (0, 30, 60, 90 held before each)', async () => {
      const others = h.other ? [c, h.other] : [c];
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => others[i % others.length]!.reserve([item({ estimate: 30 })], T0)));
      expect(results.filter((r) => r.ok)).toHaveLength(4);
      for (const r of results) if (!r.ok) expect(r).toMatchObject({ used: 0, reserved: 120 });
    });

    it('50 concurrent reservations against room for 10: exactly 10 are admitted', async () => {
      const others = h.other ? [c, h.other] : [c];
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => others[i % others.length]!.reserve([item({ estimate: 10 })], T0)));
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      for (const r of results) if (r.ok) await others[0]!.settle(r.reservation, [{ actual: 10 }], T0);
      expect(await used()).toEqual({ alice: 100 });
    });
  });
}
