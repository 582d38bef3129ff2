import {
  counterName,
  PERIOD_GRACE_MS,
  periodOf,
  RESERVATION_TTL_MS,
  reservationId,
  reservedItems,
  type CounterScope,
  type Reservation,
  type ReserveItem,
  type ReserveOutcome,
  type SettleItem,
  type UsageAlert,
  type UsageCounters,
} from '../usage-counters.js';

/** One policy's counters in one period. */
interface Counter {
  used: Map<string, number>;
  reserved: Map<string, number>;
  /** Groups whose alert fired in this period. */
  alerted: Set<string>;
  /** Reservation id → what it holds and until when. */
  holds: Map<string, { group: string; estimate: number; expires: number }>;
  /** Expired reservation ids → when they expired (a late settle still counts, once). */
  gone: Map<string, number>;
  /** When the period ends (Infinity: never). */
  end: number;
  /** The earliest time a hold expires or a gone id may be forgotten: `purge` has nothing to do before it. */
  nextPurge: number;
}

export interface MemoryUsageCountersOptions {
  reservationTtlMs?: number;
}

/**
 * The embedded default: counters of this process (lost on restart). The same semantics as the Redis
 * adapter (the contract test runs both): all-or-nothing reservations, idempotent settles, expiring
 * reservations, one alert per period and group.
 */
export class MemoryUsageCounters implements UsageCounters {
  readonly kind = 'memory' as const;
  private readonly counters = new Map<string, Counter>();
  private readonly ttl: number;

  constructor(opts: MemoryUsageCountersOptions = {}) {
    this.ttl = opts.reservationTtlMs ?? RESERVATION_TTL_MS;
  }

  async reserve(items: readonly ReserveItem[], now: number): Promise<ReserveOutcome> {
    const reserved = reservedItems(items, now);
    const counters = reserved.map((i) => this.counter(counterName(i, i.period), i.period.end, now));
    for (let k = 0; k < reserved.length; k++) {
      const i = reserved[k]!;
      const c = counters[k]!;
      const used = c.used.get(i.group) ?? 0;
      const held = c.reserved.get(i.group) ?? 0;
      if (used + held >= i.limit) return { ok: false, refused: k, used, reserved: held, periodEnd: i.period.end };
    }
    const id = reservationId();
    for (let k = 0; k < reserved.length; k++) {
      const i = reserved[k]!;
      const c = counters[k]!;
      c.reserved.set(i.group, (c.reserved.get(i.group) ?? 0) + i.estimate);
      const expires = now + this.ttl;
      c.holds.set(id, { group: i.group, estimate: i.estimate, expires });
      if (expires < c.nextPurge) c.nextPurge = expires;
    }
    return { ok: true, reservation: { id, items: reserved } };
  }

  async settle(r: Reservation, actual: readonly SettleItem[], now: number): Promise<UsageAlert[]> {
    const alerts: UsageAlert[] = [];
    r.items.forEach((i, k) => {
      const c = this.counters.get(counterName(i, i.period));
      if (!c) return;
      this.purge(c, now);
      const hold = c.holds.get(r.id);
      if (hold) {
        c.holds.delete(r.id);
        const left = (c.reserved.get(hold.group) ?? 0) - hold.estimate;
        if (left > 0) c.reserved.set(hold.group, left);
        else c.reserved.delete(hold.group);
      } else if (!c.gone.delete(r.id)) {
        return; // settled or released before
      }
      const a = actual[k];
      if (!a || !(a.actual > 0)) return;
      const group = a.group ?? i.group;
      const used = (c.used.get(group) ?? 0) + a.actual;
      c.used.set(group, used);
      if (i.alertAt !== null && used >= i.alertAt && !c.alerted.has(group)) {
        c.alerted.add(group);
        alerts.push({ item: k, group, used, period: i.period });
      }
    });
    return alerts;
  }

  async release(r: Reservation, now: number): Promise<void> {
    await this.settle(r, [], now);
  }

  async usage(scope: CounterScope, now: number): Promise<Record<string, number>> {
    const c = this.counters.get(counterName(scope, periodOf(scope.reset, now)));
    return c ? Object.fromEntries(c.used) : {};
  }

  /** The counter of `name`, created empty; counters of periods ended more than a day ago are dropped. */
  private counter(name: string, end: number, now: number): Counter {
    let c = this.counters.get(name);
    if (!c) {
      for (const [k, old] of this.counters) if (old.end + PERIOD_GRACE_MS < now) this.counters.delete(k);
      c = { used: new Map(), reserved: new Map(), alerted: new Set(), holds: new Map(), gone: new Map(), end, nextPurge: Infinity };
      this.counters.set(name, c);
    }
    this.purge(c, now);
    return c;
  }

  /**
   * Expired reservations stop holding; those expired more than a day ago are forgotten. Nothing is
   * walked before the counter's `nextPurge` (every reserve and settle passes here).
   */
  private purge(c: Counter, now: number): void {
    if (now < c.nextPurge) return;
    let next = Infinity;
    for (const [id, h] of c.holds) {
      if (h.expires > now) {
        if (h.expires < next) next = h.expires;
        continue;
      }
      c.holds.delete(id);
      const left = (c.reserved.get(h.group) ?? 0) - h.estimate;
      if (left > 0) c.reserved.set(h.group, left);
      else c.reserved.delete(h.group);
      c.gone.set(id, now);
    }
    for (const [id, at] of c.gone) {
      if (at + PERIOD_GRACE_MS < now) c.gone.delete(id);
      else if (at + PERIOD_GRACE_MS < next) next = at + PERIOD_GRACE_MS;
    }
    c.nextPurge = next;
  }
}
