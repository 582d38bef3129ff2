/** What stores report: handed in, so adapters never import prom-client or the logger. */
export interface StoreObserver {
  /** One store operation finished (ok or failed), with its duration. */
  operation(store: string, op: string, seconds: number, ok: boolean, error?: unknown): void;
}

export const noopStoreObserver: StoreObserver = { operation() {} };
