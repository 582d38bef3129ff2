import { observed, type RedisConnection } from './connection.js';
import { SyncTracker } from './sync-tracker.js';

/** What a store does with what the mirror reads: every field at a (re)load, or one field after a message. */
export interface HashMirrorTarget {
  /** The whole hash, read at connect and on every reconnect: replace what the store holds. */
  all(fields: Record<string, string>): void;
  /** One field, re-read after the channel named it: its value, or null when it is gone. */
  one(field: string, value: string | null): void;
}

/**
 * Keeps a store's local copy of one Redis hash current: the whole hash is read on every
 * (re)connect (SyncTracker), and each message on `channel` names a field, which is then re-read.
 * Writers change the hash and publish the field in one Lua script, so a message never arrives
 * before its write. Fields written during a full load are re-read after it (the load may predate
 * them). Shared by the gateway-key and virtual-key stores.
 */
export class HashMirror {
  private readonly sync: SyncTracker;
  private readonly stopListening: () => void;
  private readonly refreshListeners = new Set<(field: string) => void>();
  private touchedDuringLoad: Set<string> | undefined;

  constructor(
    private readonly conn: RedisConnection,
    private readonly store: string,
    private readonly hash: string,
    channel: string,
    private readonly target: HashMirrorTarget,
  ) {
    this.sync = new SyncTracker(store, conn, () => observed(conn, store, 'load', () => this.load()));
    this.stopListening = conn.listen(
      channel,
      (field) => void this.refresh(field).catch(() => {}),
      () => void this.sync.run(),
    );
  }

  /** Resolves once a first load has completed, or rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return this.sync.ready(timeoutMs);
  }

  /** Called after a field named on the channel (by any instance) has been re-read. */
  onRefreshed(cb: (field: string) => void): () => void {
    this.refreshListeners.add(cb);
    return () => this.refreshListeners.delete(cb);
  }

  /** A write of this instance to `field` finished: re-read it after a load that is running now. */
  wrote(field: string): void {
    this.touchedDuringLoad?.add(field);
  }

  close(): void {
    this.stopListening();
    this.sync.close();
    this.refreshListeners.clear();
  }

  private async load(): Promise<void> {
    const touched = new Set<string>();
    this.touchedDuringLoad = touched;
    try {
      this.target.all(await this.conn.client.hgetall(this.hash));
    } finally {
      this.touchedDuringLoad = undefined;
    }
    for (const f of touched) await this.refresh(f);
  }

  private async refresh(field: string): Promise<void> {
    this.touchedDuringLoad?.add(field);
    const value = await observed(this.conn, this.store, 'refresh', () => this.conn.client.hget(this.hash, field));
    this.target.one(field, value);
    for (const cb of [...this.refreshListeners]) cb(field);
  }
}
