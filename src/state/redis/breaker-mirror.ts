import { type Circuit, CLOSED, isIdle, reduce, type Step } from '../breaker-machine.js';
import type { Transition } from '../breaker-store.js';
import { asStatus, type Shared } from './breaker-scripts.js';

/** One circuit in the mirror. */
export interface MirrorEntry {
  /** The local view: the breaker machine's state. */
  c: Circuit;
  /** The shared change last applied. */
  seq: number;
  /** Scripts of this instance in flight for this circuit. */
  pending: number;
  /** The newest shared state seen while scripts were in flight (applied when they are all back). */
  deferred: Shared | undefined;
}

export interface BreakerMirrorOptions {
  /** This instance, as probe owner. */
  origin: string;
  /** Closed circuits remembered (to order late messages). */
  maxEntries: number;
  /** A transition learned from the shared state. */
  onRemoteTransition: ((id: string, transition: Transition) => void) | undefined;
  /** The shared state holds a probe lease in this instance's name and no probe runs here: give it back. */
  orphanedLease: (id: string, e: MirrorEntry) => void;
}

/**
 * The local mirror of the shared breaker state (RedisBreakerStore, breaker-store.ts): the breaker
 * machine's state per circuit, moved only by its reducer, with the shared changes applied in the
 * order of their numbers. A change that arrives while this instance has scripts in flight for the
 * circuit waits until they are back (their replies may be newer).
 */
export class BreakerMirror {
  readonly entries = new Map<string, MirrorEntry>();
  /** The highest change number seen: a snapshot below it means Redis lost its data. */
  private maxSeq = 0;

  constructor(private readonly opts: BreakerMirrorOptions) {}

  step(e: MirrorEntry, step: Step): Step {
    e.c = step.state;
    return step;
  }

  entry(id: string): MirrorEntry {
    let e = this.entries.get(id);
    if (!e) {
      this.prune(1);
      e = { c: CLOSED, seq: 0, pending: 0, deferred: undefined };
      this.entries.set(id, e);
    }
    return e;
  }

  /** A reply came back: apply the newest state known once no script of ours is in flight. */
  settle(id: string, e: MirrorEntry, s: Shared | undefined): void {
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

  /** A change message of the channel. */
  message(raw: string): void {
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

  /** The snapshot script's reply: the shared state wins, and a circuit it does not name is closed. */
  snapshot(raw: unknown[]): void {
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
  private apply(id: string, e: MirrorEntry, s: Shared): void {
    const { transition, state } = this.step(e, reduce(e.c, { type: 'shared', shared: s, self: this.opts.origin }));
    e.seq = s.seq;
    if (s.seq > this.maxSeq) this.maxSeq = s.seq;
    if (transition) this.opts.onRemoteTransition?.(id, transition);
    // A lease in our name with no probe running here (it settled while Redis was away).
    if (s.status === 'half-open' && s.owner === this.opts.origin && !state.probing) this.opts.orphanedLease(id, e);
  }

  /** Bounded: forget idle closed circuits (oldest first) beyond maxEntries. */
  private prune(adding = 0): void {
    const max = this.opts.maxEntries;
    if (this.entries.size + adding <= max) return;
    for (const [id, e] of this.entries) {
      if (this.entries.size <= max * 0.9) break;
      if (isIdle(e.c) && e.pending === 0) this.entries.delete(id);
    }
  }
}
