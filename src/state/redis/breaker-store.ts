import { randomUUID } from 'node:crypto';
import { followChannel, type SyncTracker } from './sync-tracker.js';
import { ADMIT, admission, FAILURE, PROBE_GRANTED, reduce, refuse, RELEASE, type Step, SUCCESS } from '../breaker-machine.js';
import type { Admission, AdmitResult, BreakerPolicy, BreakerStore, CircuitStatus, Transition } from '../breaker-store.js';
import { breakerKeys, breakerScripts, type BreakerScripts, type Reply, scriptArgs } from './breaker-scripts.js';
import { BreakerMirror, type MirrorEntry } from './breaker-mirror.js';
import { observed, type RedisConnection } from './connection.js';

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
  private readonly mirror: BreakerMirror;
  private readonly lease: (policy: BreakerPolicy) => number;
  private readonly stateTtlMs: number;
  private readonly stopListening: () => void;
  private readonly scripts: BreakerScripts;
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
    this.mirror = new BreakerMirror({
      origin: this.origin,
      maxEntries: opts.maxEntries ?? 10_000,
      onRemoteTransition: opts.onRemoteTransition,
      orphanedLease: (id, e) => {
        if (this.conn.available()) void this.send(id, e, 'release', (k) => this.scripts.release(k));
      },
    });
    this.scripts = breakerScripts(conn.client);
    ({ sync: this.sync, stop: this.stopListening } = followChannel(
      'RedisBreakerStore',
      conn,
      this.keys.channel,
      async () => this.mirror.snapshot(await observed(conn, REDIS_BREAKER_STORE, 'snapshot', () => this.scripts.snapshot(this.keys))),
      (msg) => this.mirror.message(msg),
    ));
  }

  // ---- the port ---------------------------------------------------------------------------------

  peek(id: string, now: number, policy: BreakerPolicy): Admission {
    return admission(this.mirror.entries.get(id)?.c, now, policy, this.conn.available());
  }

  admit(id: string, now: number, policy: BreakerPolicy): AdmitResult | Promise<AdmitResult> {
    const e = this.mirror.entries.get(id);
    if (!e) return { admission: admission(undefined, now, policy) };
    const shared = this.conn.available();
    const a = admission(e.c, now, policy, shared);
    if (a.kind !== 'probe') return { admission: a };
    return shared ? this.takeShared(id, e, now, policy) : admitted(this.mirror.step(e, reduce(e.c, ADMIT, now, policy)));
  }

  onSuccess(id: string): Transition | undefined {
    const e = this.mirror.entries.get(id);
    if (!e) return undefined;
    const before = e.c;
    const t = this.mirror.step(e, reduce(before, SUCCESS)).transition;
    // A success on a healthy circuit (or a late one on an open circuit) changes nothing: no Redis call.
    if (e.c !== before && this.conn.available()) void this.send(id, e, 'succeed', (k) => this.scripts.succeed(k));
    return t;
  }

  onFailure(id: string, now: number, policy: BreakerPolicy): Transition | undefined {
    const e = this.mirror.entry(id);
    const before = e.c;
    const t = this.mirror.step(e, reduce(before, FAILURE, now, policy)).transition;
    if (e.c !== before && this.conn.available()) {
      void this.send(id, e, 'fail', (k) => this.scripts.fail(k, now, policy.failureThreshold), policy);
    }
    return t;
  }

  releaseProbe(id: string): void {
    const e = this.mirror.entries.get(id);
    if (!e) return;
    const before = e.c;
    this.mirror.step(e, reduce(before, RELEASE));
    if (e.c !== before && this.conn.available()) void this.send(id, e, 'release', (k) => this.scripts.release(k));
  }

  status(id: string): CircuitStatus {
    return this.mirror.entries.get(id)?.c.status ?? 'closed';
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

  private async takeShared(id: string, e: MirrorEntry, now: number, policy: BreakerPolicy): Promise<AdmitResult> {
    const lease = Math.max(1, Math.round(this.lease(policy)));
    const r = await this.send(id, e, 'probe', (k) => this.scripts.probe(k, now, policy.cooldownMs, lease), policy, (reply) => {
      // our own transition: made before the reply is applied, so it is not reported as remote
      if (reply.verdict === 'granted') this.mirror.step(e, reduce(e.c, PROBE_GRANTED));
    });
    // Redis failed under us: decide locally, as the memory store would
    if (!r) return admitted(this.mirror.step(e, reduce(e.c, ADMIT, now, policy)));
    if (r.verdict === 'granted') {
      return { admission: { kind: 'probe' }, transition: r.from === 'half-open' ? undefined : { from: r.from, to: 'half-open' } };
    }
    if (r.verdict === 'closed') return { admission: { kind: 'pass' } };
    return { admission: refuse(r.left) };
  }

  /** Run a script for circuit `id`; its reply is applied in order with the messages. Never rejects. */
  private async send(
    id: string,
    e: MirrorEntry,
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
    this.mirror.settle(id, e, reply);
    return reply;
  }
}

/** An admit step as the port's result. */
function admitted(step: Step): AdmitResult {
  return step.transition ? { admission: step.admission!, transition: step.transition } : { admission: step.admission! };
}
