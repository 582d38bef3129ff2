import type { RedisConnection } from './connection.js';

/**
 * Keeps a local mirror loaded from Redis: runs the store's load on every (re)connect, one at a time
 * (a request that arrives during a load runs it once more after), retries a failed load while Redis
 * is still there, counts completed loads and lets callers wait for one. Shared by the stores that
 * keep a mirror (vector index, breakers).
 */
export class SyncTracker {
  private readonly listeners = new Set<() => void>();
  private syncs = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;

  /**
   * `load` reports its own failures (through `observed()`); here they only cause a retry. The owner
   * hands `run` to `RedisConnection.listen` as its onSync callback.
   */
  constructor(
    private readonly owner: string,
    private readonly conn: RedisConnection,
    private readonly load: () => Promise<void>,
  ) {}

  /** Load the mirror now. Coalesced: one load at a time. */
  run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.load();
          this.synced();
        } catch {
          // try again soon if Redis is still there (else the reconnect will)
          if (!this.closed && this.conn.available()) setTimeout(() => this.closed || void this.run(), 1000).unref();
        }
      } while (this.again && this.conn.available());
      this.running = undefined;
    })();
    return this.running;
  }

  /** Called after every completed load. Returns an unsubscribe. */
  private onSynced(cb: () => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Resolves once a first load has completed (at once if it has), or rejects after `timeoutMs`. */
  ready(timeoutMs = 5000): Promise<void> {
    return this.syncs > 0 ? Promise.resolve() : this.next(timeoutMs);
  }

  /** Resolves after the next completed load, or rejects after `timeoutMs`. */
  next(timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`${this.owner}: no sync within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = this.onSynced(() => {
        clearTimeout(timer);
        off();
        resolve();
      });
    });
  }

  /** Stop: no more retries, listeners dropped. */
  close(): void {
    this.closed = true;
    this.listeners.clear();
  }

  private synced(): void {
    this.syncs++;
    for (const cb of [...this.listeners]) cb();
  }
}

/**
 * A local mirror that follows a pub/sub channel: `load` reads everything again on every (re)connect
 * (one at a time, through a SyncTracker), and `onMessage` applies each change another instance
 * announces. Answers the tracker (for `ready`) and the function that stops listening.
 */
export function followChannel(
  owner: string,
  conn: RedisConnection,
  channel: string,
  load: () => Promise<void>,
  onMessage: (message: string) => void,
): { sync: SyncTracker; stop: () => void } {
  const sync = new SyncTracker(owner, conn, load);
  const stop = conn.listen(channel, onMessage, () => void sync.run());
  return { sync, stop };
}
