/** What stores report: handed in, so adapters never import prom-client or the logger. */
export interface StoreObserver {
  /** One store operation finished (ok or failed), with its duration. */
  operation(store: string, op: string, seconds: number, ok: boolean, error?: unknown): void;
  /**
   * A shared store's backend became available (true) or unavailable (false); called on each change,
   * not per request. While unavailable the gateway serves degraded (cache disabled, breakers local).
   */
  availability?(store: string, available: boolean): void;
}

export const noopStoreObserver: StoreObserver = { operation() {} };
