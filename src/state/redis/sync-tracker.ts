/**
 * Counts a local mirror's completed loads from Redis (one per (re)connect) and lets callers wait for
 * one. Shared by the stores that keep a mirror (vector index, breakers).
 */
export class SyncTracker {
  private readonly listeners = new Set<() => void>();
  private syncs = 0;

  constructor(private readonly owner: string) {}

  /** Completed loads so far. */
  get count(): number {
    return this.syncs;
  }

  /** A load completed: count it and tell the listeners. */
  synced(): void {
    this.syncs++;
    for (const cb of [...this.listeners]) cb();
  }

  /** Called after every completed load. Returns an unsubscribe. */
  onSynced(cb: () => void): () => void {
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

  clear(): void {
    this.listeners.clear();
  }
}
