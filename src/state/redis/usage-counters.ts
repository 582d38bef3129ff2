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
import { member, OP_RESERVE, OP_SETTLE, usageKeys, usageScripts, type UsageKeys, type UsageScripts } from './usage-scripts.js';

export const REDIS_USAGE_STORE = 'redis-usage';

export interface RedisUsageCountersOptions {
  /** Key prefix (default `sluice:`). */
  prefix?: string;
  reservationTtlMs?: number;
}

/** Epoch ms a period's keys expire at (0: never). */
const keepUntil = (end: number): number => (Number.isFinite(end) ? end + PERIOD_GRACE_MS : 0);

/** Operations sent in one script call at most (a longer queue goes in several calls). */
const BATCH_MAX = 256;
/** Counter names whose keys are remembered (then the memo starts over). */
const KEYS_MEMO_MAX = 10_000;

/** One queued operation: its keys and arguments, and what to do with its part of the answer. */
interface Op {
  keys: string[];
  args: (string | number)[];
  /** Reads this op's answer from `out` at `at`; answers where the next op's answer starts. */
  take(out: number[], at: number): number;
  fail(e: unknown): void;
}

/**
 * Shared counters: every instance on the same Redis admits against the same totals, and they survive
 * a gateway restart (see usage-scripts.ts for the keys). Operations are queued and sent together once
 * per event-loop turn (setImmediate), in one script call: under load many requests' reservations and
 * settles share one round trip, one write and one Redis command, each still applied atomically and
 * in order. Failures reject every operation of the call (the caller decides: fail open or closed, or
 * retry a settle) and are counted by `observed` as `redis-usage` store errors.
 */
export class RedisUsageCounters implements UsageCounters {
  readonly kind = 'redis' as const;
  private readonly keys: UsageKeys;
  private readonly scripts: UsageScripts;
  private readonly ttl: number;
  private queue: Op[] = [];
  private scheduled = false;
  private readonly keysOf = new Map<string, [string, string, string]>();

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisUsageCountersOptions = {},
  ) {
    this.keys = usageKeys(opts.prefix ?? 'sluice:');
    this.scripts = usageScripts(conn.client);
    this.ttl = opts.reservationTtlMs ?? RESERVATION_TTL_MS;
  }

  reserve(items: readonly ReserveItem[], now: number): Promise<ReserveOutcome> {
    const reserved = reservedItems(items, now);
    const id = reservationId();
    const keys: string[] = [];
    const args: (string | number)[] = [OP_RESERVE, id, now, now + this.ttl, reserved.length];
    for (const i of reserved) {
      this.pushKeys(keys, i);
      args.push(i.group, i.estimate, i.limit, keepUntil(i.period.end));
    }
    return new Promise((resolve, reject) => {
      this.enqueue({
        keys,
        args,
        take(out, at) {
          if (Number(out[at]) === 0) {
            resolve({ ok: true, reservation: { id, items: reserved } });
            return at + 1;
          }
          const k = Number(out[at + 1]);
          resolve({ ok: false, refused: k, used: Number(out[at + 2]), reserved: Number(out[at + 3]), periodEnd: reserved[k]!.period.end });
          return at + 4;
        },
        fail: reject,
      });
    });
  }

  settle(r: Reservation, actual: readonly SettleItem[], _now: number): Promise<UsageAlert[]> {
    const keys: string[] = [];
    const args: (string | number)[] = [OP_SETTLE, r.items.length];
    r.items.forEach((i, k) => {
      this.pushKeys(keys, i);
      const a = actual[k];
      const amount = a && a.actual > 0 ? a.actual : 0;
      args.push(member(r.id, i.estimate, i.group), i.group, i.estimate, amount, a?.group ?? i.group, i.alertAt ?? -1);
    });
    return new Promise((resolve, reject) => {
      this.enqueue({
        keys,
        args,
        take(out, at) {
          const n = Number(out[at]);
          const alerts: UsageAlert[] = [];
          for (let j = at + 1; j + 1 <= at + n; j += 2) {
            const k = Number(out[j]);
            const item = r.items[k]!;
            alerts.push({ item: k, group: actual[k]?.group ?? item.group, used: Number(out[j + 1]), period: item.period });
          }
          resolve(alerts);
          return at + 1 + n;
        },
        fail: reject,
      });
    });
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

  private enqueue(op: Op): void {
    this.queue.push(op);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what was queued (at most BATCH_MAX operations per call). */
  private flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) {
      const ops = this.queue.length <= BATCH_MAX ? this.queue : this.queue.slice(0, BATCH_MAX);
      this.queue = this.queue.length <= BATCH_MAX ? [] : this.queue.slice(BATCH_MAX);
      void this.send(ops);
    }
  }

  private async send(ops: Op[]): Promise<void> {
    const keys: string[] = [];
    const args: (string | number)[] = [PERIOD_GRACE_MS];
    for (const op of ops) {
      for (const k of op.keys) keys.push(k);
      for (const a of op.args) args.push(a);
    }
    const opName = ops.length === 1 ? (ops[0]!.args[0] === OP_RESERVE ? 'reserve' : 'settle') : 'batch';
    let out: number[];
    try {
      out = await observed(this.conn, REDIS_USAGE_STORE, opName, () => this.scripts.sluiceUseBatch(keys.length, ...keys, ...args));
    } catch (e) {
      for (const op of ops) op.fail(e);
      return;
    }
    let at = 0;
    for (const op of ops) at = op.take(out, at);
  }

  private pushKeys(keys: string[], i: ReservedItem): void {
    const name = counterName(i, i.period);
    let k = this.keysOf.get(name);
    if (!k) {
      if (this.keysOf.size >= KEYS_MEMO_MAX) this.keysOf.clear();
      k = [this.keys.counter(name), this.keys.reservations(name), this.keys.expired(name)];
      this.keysOf.set(name, k);
    }
    keys.push(k[0], k[1], k[2]);
  }
}
