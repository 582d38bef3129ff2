/**
 * Usage counters of the usage-limit policies, behind a port (memory: one process; Redis: shared by
 * every instance, Lua scripts in redis/usage-scripts.ts). A counter is per policy, unit, period and
 * group value, and holds what was used and what is reserved by requests in flight:
 *
 * - `reserve` admits a request on every policy it matches at once, all or nothing: only while, for
 *   each, used + reserved < limit (some of the limit is left), and then holds its estimate on each,
 *   whether or not the estimate fits in what is left. Else nothing is reserved and the first refusing
 *   item is named with its used and reserved units (used ≥ limit: the limit is reached; else requests
 *   in flight hold the rest). Checking the estimate against the rest instead would refuse a request
 *   whose estimate (1,024 output tokens by default) is larger than a small limit while nothing is
 *   used; this way sequential requests stop once usage reaches the limit, and requests in flight
 *   together can pass it by no more than what the last one admitted used beyond the room it found
 *   (plus what those in flight with it used beyond their estimates).
 * - `settle` replaces a reservation's estimates with the real usage (each item may be counted under
 *   another group than it reserved in: the target that answered decides `provider` and `model`),
 *   and reports the groups whose usage reached their alert threshold for the first time in the
 *   period (a flag set atomically: one alert per period per group, however many instances).
 *   Idempotent: settling (or releasing) a reservation again changes nothing.
 * - `release` frees a reservation without counting anything (settle with zero).
 * - A reservation that is never settled (the process died) expires after `reservationTtlMs`: its
 *   estimate stops counting as reserved. A settle that arrives after that still counts its usage
 *   (for up to a day), once.
 *
 * Amounts are whole units: tokens, or nano-dollars (1e-9 USD) for cost policies, so sums are exact.
 * Periods are UTC: `daily` from midnight, `weekly` from Monday midnight, `monthly` from the 1st;
 * none (`null`) never ends. A new period starts from zero; a period's counters are dropped a day
 * after it ends. The clock is the caller's (`now`, epoch ms), so tests move it.
 */
import type { PeriodicReset, PolicyType } from './policy-store.js';

export type { PeriodicReset };

/** Nano-dollars per dollar: cost counters are whole nano-dollars. */
export const NANO_USD = 1e9;

/** How long an unsettled reservation holds its estimate (the process that made it may have died). */
export const RESERVATION_TTL_MS = 15 * 60_000;
/** How long after a period's end its counters (and expired reservations awaiting a late settle) are kept. */
export const PERIOD_GRACE_MS = 24 * 3600_000;

const DAY_MS = 86_400_000;

export interface Period {
  /** `d2025-05-05`, `w2025-05-05` (the Monday), `m2025-05`, or `all` (no reset). */
  key: string;
  /** Epoch ms when the next period starts; Infinity without reset. */
  end: number;
}

const ymd = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

function computePeriod(reset: PeriodicReset | null, now: number): { start: number; period: Period } {
  switch (reset) {
    case 'daily': {
      const start = Math.floor(now / DAY_MS) * DAY_MS;
      return { start, period: { key: `d${ymd(start)}`, end: start + DAY_MS } };
    }
    case 'weekly': {
      const day = Math.floor(now / DAY_MS) * DAY_MS;
      const sinceMonday = (new Date(day).getUTCDay() + 6) % 7;
      const start = day - sinceMonday * DAY_MS;
      return { start, period: { key: `w${ymd(start)}`, end: start + 7 * DAY_MS } };
    }
    case 'monthly': {
      const d = new Date(now);
      const y = d.getUTCFullYear();
      const m = d.getUTCMonth();
      const start = Date.UTC(y, m, 1);
      return { start, period: { key: `m${ymd(start).slice(0, 7)}`, end: Date.UTC(y, m + 1, 1) } };
    }
    default:
      return { start: -Infinity, period: { key: 'all', end: Infinity } };
  }
}

/** The last period computed per reset kind: requests reuse it until the clock leaves it. */
const lastPeriod = new Map<PeriodicReset | null, { start: number; period: Period }>();

/** The period `now` falls in, for a policy's `periodic_reset` (UTC boundaries). Do not change the answer. */
export function periodOf(reset: PeriodicReset | null, now: number): Period {
  const hit = lastPeriod.get(reset);
  if (hit && now >= hit.start && now < hit.period.end) return hit.period;
  const p = computePeriod(reset, now);
  lastPeriod.set(reset, p);
  return p.period;
}

/** A policy amount (tokens, or USD for cost) in whole counter units. */
export function toUnits(type: PolicyType, amount: number): number {
  return type === 'cost' ? Math.round(amount * NANO_USD) : Math.round(amount);
}

/** Counter units back in the policy's unit (tokens, or USD). */
export function fromUnits(type: PolicyType, units: number): number {
  return type === 'cost' ? units / NANO_USD : units;
}

/** Which counters: a policy's, in its unit, for its reset. */
export interface CounterScope {
  policyId: string;
  type: PolicyType;
  reset: PeriodicReset | null;
}

export interface ReserveItem extends CounterScope {
  /** The group value (`""` without group_by). */
  group: string;
  /** Units to hold while the request runs (≥ 0); need not fit in what is left of the limit. */
  estimate: number;
  /** The policy's credit_limit in units. */
  limit: number;
  /** The alert threshold in units; null: no alert. */
  alertAt: number | null;
}

/** What `reserve` holds, to hand to `settle` or `release`. */
export interface Reservation {
  readonly id: string;
  readonly items: readonly ReservedItem[];
}

export interface ReservedItem extends ReserveItem {
  period: Period;
}

export type ReserveOutcome =
  | { ok: true; reservation: Reservation }
  /**
   * `refused`: index of the first item with nothing left (used + reserved ≥ limit); its group's used
   * and reserved units (used ≥ limit: reached; else in-flight reservations fill the rest); its period's end.
   */
  | { ok: false; refused: number; used: number; reserved: number; periodEnd: number };

export interface SettleItem {
  /** Units really used (0: nothing counted). */
  actual: number;
  /** Count under this group instead of the reserved one (the answering target's provider or model). */
  group?: string;
}

/** A group whose usage reached its alert threshold with this settle, first in its period. */
export interface UsageAlert {
  /** Index of the reservation item. */
  item: number;
  group: string;
  /** Units used in the period after this settle. */
  used: number;
  period: Period;
}

export interface UsageCounters {
  readonly kind: 'memory' | 'redis';
  /** All or nothing over `items` (each a different policy). */
  reserve(items: readonly ReserveItem[], now: number): Promise<ReserveOutcome>;
  /** `actual[i]` for `reservation.items[i]`. Idempotent. */
  settle(reservation: Reservation, actual: readonly SettleItem[], now: number): Promise<UsageAlert[]>;
  /** Frees the reservation (counts nothing). Idempotent. */
  release(reservation: Reservation, now: number): Promise<void>;
  /** Group value → units used in the period `now` falls in. */
  usage(scope: CounterScope, now: number): Promise<Record<string, number>>;
}

/** The counters' name for a scope's period (a Redis key suffix, a memory map key). */
export function counterName(scope: CounterScope, period: Period): string {
  return `${scope.policyId}:${scope.type}:${period.key}`;
}

let seq = 0;
const instance = Math.random().toString(36).slice(2, 10);

/** A reservation id unique across instances (random per process, then a counter). */
export function reservationId(): string {
  seq = (seq + 1) % Number.MAX_SAFE_INTEGER;
  return `${instance}.${seq.toString(36)}`;
}

/** The reservation's items with their periods. */
export function reservedItems(items: readonly ReserveItem[], now: number): ReservedItem[] {
  return items.map((i) => ({ ...i, period: periodOf(i.reset, now) }));
}
