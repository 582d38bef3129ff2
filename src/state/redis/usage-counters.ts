import {
  counterName,
  PERIOD_GRACE_MS,
  periodOf,
  RESERVATION_TTL_MS,
  reservationId,
  reservedItems,
  type CounterScope,
  type Reservation,
  type ReservedItem,
  type ReserveItem,
  type ReserveOutcome,
  type SettleItem,
  type UsageAlert,
  type UsageCounters,
} from '../usage-counters.js';
import { observed, type RedisConnection } from './connection.js';
import { member, usageKeys, usageScripts, type UsageKeys, type UsageScripts } from './usage-scripts.js';

export const REDIS_USAGE_STORE = 'redis-usage';

export interface RedisUsageCountersOptions {
  /** Key prefix (default `sluice:`). */
  prefix?: string;
  reservationTtlMs?: number;
}

/** Epoch ms a period's keys expire at (0: never). */
const keepUntil = (end: number): number => (Number.isFinite(end) ? end + PERIOD_GRACE_MS : 0);

/**
 * Shared counters: one Lua call to reserve on every matching policy at once, one to settle (see
 * usage-scripts.ts for the keys). Survives a gateway restart; every instance on the same Redis
 * admits against the same totals. Failures reject (the caller decides: fail open or closed) and are
 * counted by `observed` as `redis-usage` store errors.
 */
export class RedisUsageCounters implements UsageCounters {
  readonly kind = 'redis' as const;
  private readonly keys: UsageKeys;
  private readonly scripts: UsageScripts;
  private readonly ttl: number;

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisUsageCountersOptions = {},
  ) {
    this.keys = usageKeys(opts.prefix ?? 'sluice:');
    this.scripts = usageScripts(conn.client);
    this.ttl = opts.reservationTtlMs ?? RESERVATION_TTL_MS;
  }

  async reserve(items: readonly ReserveItem[], now: number): Promise<ReserveOutcome> {
    const reserved = reservedItems(items, now);
    const id = reservationId();
    const keys: string[] = [];
    const args: (string | number)[] = [now, now + this.ttl, id, PERIOD_GRACE_MS];
    for (const i of reserved) {
      this.pushKeys(keys, i);
      args.push(i.group, i.estimate, i.limit, keepUntil(i.period.end));
    }
    const r = await observed(this.conn, REDIS_USAGE_STORE, 'reserve', () => this.scripts.sluiceUseReserve(keys.length, ...keys, ...args));
    if (r === 0) return { ok: true, reservation: { id, items: reserved } };
    const [k, used, held] = r as [number, number, number];
    return { ok: false, refused: k, used: Number(used), reserved: Number(held), periodEnd: reserved[k]!.period.end };
  }

  async settle(r: Reservation, actual: readonly SettleItem[], _now: number): Promise<UsageAlert[]> {
    const keys: string[] = [];
    const args: (string | number)[] = [];
    r.items.forEach((i, k) => {
      this.pushKeys(keys, i);
      const a = actual[k];
      const amount = a && a.actual > 0 ? a.actual : 0;
      args.push(member(r.id, i.estimate, i.group), i.group, i.estimate, amount, a?.group ?? i.group, i.alertAt ?? -1);
    });
    const out = await observed(this.conn, REDIS_USAGE_STORE, 'settle', () => this.scripts.sluiceUseSettle(keys.length, ...keys, ...args));
    const alerts: UsageAlert[] = [];
    for (let j = 0; j + 1 < out.length; j += 2) {
      const k = Number(out[j]);
      const item = r.items[k]!;
      alerts.push({ item: k, group: actual[k]?.group ?? item.group, used: Number(out[j + 1]), period: item.period });
    }
    return alerts;
  }

  async release(r: Reservation, now: number): Promise<void> {
    await this.settle(r, [], now);
  }

  async usage(scope: CounterScope, now: number): Promise<Record<string, number>> {
    const hash = await observed(this.conn, REDIS_USAGE_STORE, 'usage', () =>
      this.conn.client.hgetall(this.keys.counter(counterName(scope, periodOf(scope.reset, now)))),
    );
    // fromEntries defines each key as an own property (a group named `__proto__` included).
    return Object.fromEntries(Object.entries(hash).flatMap(([f, v]) => (f.startsWith('u:') ? [[f.slice(2), Number(v)]] : [])));
  }

  private pushKeys(keys: string[], i: ReservedItem): void {
    const name = counterName(i, i.period);
    keys.push(this.keys.counter(name), this.keys.reservations(name), this.keys.expired(name));
  }
}
