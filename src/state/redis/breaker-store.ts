import { randomUUID } from 'node:crypto';
import { followChannel, type SyncTracker } from './sync-tracker.js';
import {
  ADMIT,
  ADMIT_SHARED,
  admission,
  type Circuit,
  CLOSED,
  FAILURE,
  isIdle,
  PROBE_GRANTED,
  reduce,
  refuse,
  RELEASE,
  type Step,
  SUCCESS,
} from '../breaker-machine.js';
import type { Admission, AdmitResult, BreakerPolicy, BreakerStore, CircuitStatus, Transition } from '../breaker-store.js';
import { asStatus, breakerKeys, breakerScripts, type BreakerScripts, type Reply, scriptArgs, type Shared } from './breaker-scripts.js';
import { observed, type RedisConnection } from './connection.js';

export { breakerKeys } from './breaker-scripts.js';

export interface RedisBreakerStoreOptions {
  /** Key prefix (default `sluice:`). */
  prefix?: string;
  /**
   * How long a probe holds the half-open slot in the cluster (default 60 s) before another instance
   * may probe: bounds the wait when the prober dies without a verdict.
   */
  probeLeaseMs?: number | ((policy: BreakerPolicy) => number);
  /** Idle circuits' shared state expires after this long (default 24 h, at least twice the cooldown). */
  stateTtlMs?: number;
  /** Closed circuits remembered locally (to order late messages), default 10,000. */
  maxEntries?: number;
  /** A transition learned from the shared state (another instance, or a reply that corrects the mirror). */
  onRemoteTransition?: (id: string, transition: Transition) => void;
}

export const REDIS_BREAKER_STORE = 'redis-breaker';

interface Entry {
  /** The local view: the breaker machine's state. */
  c: Circuit;
  /** The shared change last applied. */
  seq: number;
  /** Scripts of this instance in flight for this circuit. */
  pending: number;
  /** The newest shared state seen while scripts were in flight (applied when they are all back). */
  deferred: Shared | undefined;
}

/**
 * Breaker state shared through Redis, with a local mirror for the hot path.
 *
 * - The mirror holds the breaker machine's state per circuit (`../breaker-machine.ts`) and moves only
 *   by its reducer: local events (admit, success, failure, release) and the shared state's changes.
 * - The shared state of a circuit (a hash) changes only in Lua scripts (`breaker-scripts.ts`, the same
 *   machine), atomically; each change takes a number from one counter and is published with it.
 *   Every instance applies the messages to its mirror in that order, so a circuit opened anywhere is
 *   open everywhere a moment later.
 * - peek/admit answer from the mirror, synchronously, except when the mirror says the cooldown is
 *   over: then admit asks Redis for the probe (SET NX PX of the probe key), so exactly one instance
 *   of the cluster probes.
 * - onSuccess/onFailure change the mirror at once and return its transition (as MemoryBreakerStore
 *   does), then send the script without waiting; its reply or message corrects the mirror if the
 *   cluster knew better. A success on a healthy circuit makes no Redis call.
 * - While Redis is unavailable it is a MemoryBreakerStore (local state only); on reconnect it loads
 *   a snapshot, and the shared state wins.
 */
export class RedisBreakerStore implements BreakerStore {
  readonly prefix: string;
  /** This instance, as probe owner. */
  readonly origin = randomUUID();
  private readonly keys: ReturnType<typeof breakerKeys>;
  private readonly entries = new Map<string, Entry>();
  private readonly lease: (policy: BreakerPolicy) => number;
  private readonly stateTtlMs: number;
  private readonly maxEntries: number;
  private readonly onRemoteTransition: ((id: string, t: Transition) => void) | undefined;
  private readonly stopListening: () => void;
  private readonly scripts: BreakerScripts;
  /** The highest change number seen: a snapshot below it means Redis lost its data. */
  private maxSeq = 0;
  private readonly sync: SyncTracker;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisBreakerStoreOptions = {},
  ) {
    this.prefix = opts.prefix ?? 'sluice:';
    this.keys = breakerKeys(this.prefix);
    const lease = opts.probeLeaseMs ?? 60_000;
    this.lease = typeof lease === 'function' ? lease : () => lease;
    this.stateTtlMs = opts.stateTtlMs ?? 24 * 3600_000;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.onRemoteTransition = opts.onRemoteTransition;
    this.scripts = breakerScripts(conn.client);
    ({ sync: this.sync, stop: this.stopListening } = followChannel(
      'RedisBreakerStore',
      conn,
      this.keys.channel,
      async () => this.applySnapshot(await observed(conn, REDIS_BREAKER_STORE, 'snapshot', () => this.scripts.snapshot(this.keys))),
      (msg) => this.onMessage(msg),
    ));
  }

  // ---- the port ---------------------------------------------------------------------------------

  peek(id: string, now: number, policy: BreakerPolicy): Admission {
    return admission(this.entries.get(id)?.c, now, policy, this.conn.available());
  }

  admit(id: string, now: number, policy: BreakerPolicy): AdmitResult | Promise<AdmitResult> {
    const e = this.entries.get(id);
    if (!e) return { admission: admission(undefined, now, policy) };
    const shared = this.conn.available();
    const a = admission(e.c, now, policy, shared);
    if (a.kind !== 'probe') return { admission: a };
    return shared ? this.takeShared(id, e, now, policy) : admitted(this.step(e, reduce(e.c, ADMIT, now, policy)));
  }

  onSuccess(id: string): Transition | undefined {
    const e = this.entries.get(id);
    if (!e) return undefined;
    const before = e.c;
    const t = this.step(e, reduce(before, SUCCESS)).transition;
    // A success on a healthy circuit (or a late one on an open circuit) changes nothing: no Redis call.
    if (e.c !== before && this.conn.available()) void this.send(id, e, 'succeed', (k) => this.scripts.succeed(k));
    return t;
  }

  onFailure(id: string, now: number, policy: BreakerPolicy): Transition | undefined {
    const e = this.entry(id);
    const before = e.c;
    const t = this.step(e, reduce(before, FAILURE, now, policy)).transition;
    if (e.c !== before && this.conn.available()) {
      void this.send(id, e, 'fail', (k) => this.scripts.fail(k, now, policy.failureThreshold), policy);
    }
    return t;
  }

  releaseProbe(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    const before = e.c;
    this.step(e, reduce(before, RELEASE));
    if (e.c !== before && this.conn.available()) void this.send(id, e, 'release', (k) => this.scripts.release(k));
  }

  status(id: string): CircuitStatus {
    return this.entries.get(id)?.c.status ?? 'closed';
  }

  // ---- sync -------------------------------------------------------------------------------------

  /** Resolves once a first load from Redis has completed, or rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return this.sync.ready(timeoutMs);
  }

  /** Resolves after the next completed load from Redis, or rejects after `timeoutMs`. */
  nextSync(timeoutMs = 5000): Promise<void> {
    return this.sync.next(timeoutMs);
  }

  /** Resolves when every script sent so far has been answered (or failed). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Stop listening (the connection is the caller's to close). */
  close(): void {
    this.stopListening();
    this.sync.close();
  }

  // ---- internals --------------------------------------------------------------------------------

  private step(e: Entry, step: Step): Step {
    e.c = step.state;
    return step;
  }

  private async takeShared(id: string, e: Entry, now: number, policy: BreakerPolicy): Promise<AdmitResult> {
    const lease = Math.max(1, Math.round(this.lease(policy)));
    const r = await this.send(id, e, 'probe', (k) => this.scripts.probe(k, now, policy.cooldownMs, lease), policy, (reply) => {
      // our own transition: made before the reply is applied, so it is not reported as remote
      if (reply.verdict === 'granted') this.step(e, reduce(e.c, PROBE_GRANTED));
    });
    // Redis failed under us: decide locally, as the memory store would
    if (!r) return admitted(this.step(e, reduce(e.c, ADMIT, now, policy)));
    if (r.verdict === 'granted') {
      return { admission: { kind: 'probe' }, transition: r.from === 'half-open' ? undefined : { from: r.from, to: 'half-open' } };
    }
    if (r.verdict === 'closed') return { admission: { kind: 'pass' } };
    return { admission: refuse(r.left) };
  }

  /** Run a script for circuit `id`; its reply is applied in order with the messages. Never rejects. */
  private async send(
    id: string,
    e: Entry,
    op: string,
    run: (keysAndArgs: (string | number)[]) => Promise<Reply>,
    policy?: BreakerPolicy,
    beforeApply?: (r: Reply) => void,
  ): Promise<Reply | undefined> {
    const ttl = Math.max(this.stateTtlMs, 2 * (policy?.cooldownMs ?? 0));
    const args = scriptArgs(this.keys, id, this.origin, ttl);
    e.pending++;
    let reply: Reply | undefined;
    const call = observed(this.conn, REDIS_BREAKER_STORE, op, () => run(args));
    this.inFlight.add(call);
    try {
      reply = await call;
    } catch {
      reply = undefined; // reported by observed()
    } finally {
      this.inFlight.delete(call);
    }
    e.pending--;
    if (reply) beforeApply?.(reply);
    this.settle(id, e, reply);
    return reply;
  }

  /** A reply came back: apply the newest state known once no script of ours is in flight. */
  private settle(id: string, e: Entry, s: Shared | undefined): void {
    let best = s;
    if (e.deferred && (!best || e.deferred.seq > best.seq)) best = e.deferred;
    if (e.pending > 0) {
      e.deferred = best;
      return;
    }
    e.deferred = undefined;
    if (best && best.seq > e.seq) this.apply(id, e, best);
    this.prune();
  }

  private onMessage(raw: string): void {
    const m = JSON.parse(raw) as { id: string } & Omit<Shared, 'status'> & { status: string };
    const s: Shared = {
      seq: Number(m.seq),
      status: asStatus(m.status),
      failures: Number(m.failures),
      openedAt: Number(m.openedAt),
      owner: String(m.owner ?? ''),
      probeUntil: Number(m.probeUntil),
    };
    this.remote(String(m.id), s, false);
  }

  /** Shared state from a message or snapshot. `force`: the snapshot wins over an equal seq too. */
  private remote(id: string, s: Shared, force: boolean): void {
    if (s.seq > this.maxSeq) this.maxSeq = s.seq;
    let e = this.entries.get(id);
    if (!e) {
      if (s.status === 'closed' && s.failures === 0) return; // nothing to remember
      e = this.entry(id);
    }
    if (force ? s.seq < e.seq : s.seq <= e.seq) return;
    if (e.pending > 0) {
      if (!e.deferred || s.seq > e.deferred.seq) e.deferred = s;
      return;
    }
    this.apply(id, e, s);
  }

  /** The shared state as of `s.seq`, through the reducer. */
  private apply(id: string, e: Entry, s: Shared): void {
    const { transition, state } = this.step(e, reduce(e.c, { type: 'shared', shared: s, self: this.origin }));
    e.seq = s.seq;
    if (s.seq > this.maxSeq) this.maxSeq = s.seq;
    if (transition) this.onRemoteTransition?.(id, transition);
    if (s.status === 'half-open' && s.owner === this.origin && !state.probing && this.conn.available()) {
      // A lease in our name with no probe running here (it settled while Redis was away): give it back.
      void this.send(id, e, 'release', (k) => this.scripts.release(k));
    }
  }

  private applySnapshot(raw: unknown[]): void {
    const seq = Number(raw[0]);
    if (seq < this.maxSeq) {
      // Redis lost its data (restart without persistence, flush): its numbering starts again
      for (const e of this.entries.values()) {
        e.seq = 0;
        if (e.deferred) e.deferred = undefined;
      }
      this.maxSeq = seq;
    }
    const seen = new Set<string>();
    for (let i = 1; i + 5 < raw.length; i += 6) {
      const id = String(raw[i]);
      seen.add(id);
      this.remote(
        id,
        { seq, status: asStatus(raw[i + 1]), failures: Number(raw[i + 2]), openedAt: Number(raw[i + 3]), owner: String(raw[i + 4] ?? ''), probeUntil: Number(raw[i + 5]) },
        true,
      );
    }
    const closed = { seq, status: 'closed', failures: 0, openedAt: 0, owner: '', probeUntil: 0 } as const;
    for (const id of [...this.entries.keys()]) if (!seen.has(id)) this.remote(id, closed, true);
  }

  private entry(id: string): Entry {
    let e = this.entries.get(id);
    if (!e) {
      this.prune(1);
      e = { c: CLOSED, seq: 0, pending: 0, deferred: undefined };
      this.entries.set(id, e);
    }
    return e;
  }

  /** Bounded: forget idle closed circuits (oldest first) beyond maxEntries. */
  private prune(adding = 0): void {
    if (this.entries.size + adding <= this.maxEntries) return;
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.maxEntries * 0.9) break;
      if (isIdle(e.c) && e.pending === 0) this.entries.delete(id);
    }
  }
}

/** An admit step as the port's result. */
function admitted(step: Step): AdmitResult {
  return step.transition ? { admission: step.admission!, transition: step.transition } : { admission: step.admission! };
}
