/**
 * Cancelling a background response across instances, behind a port: the instance that answers
 * POST /v1/responses/:id/cancel asks every instance; the one that runs the response stops it,
 * stores it `cancelled`, and says so. Only a shared backend (Redis) has one: in memory every
 * response runs in the one process.
 */
export interface CancelChannel {
  /**
   * Ask every instance to stop background response `id`. Resolves true once the instance that runs
   * it has stopped it and stored it cancelled; false when none said so within the wait (it ended, or
   * the instance that ran it is gone). Rejects when the backend is out of reach.
   */
  request(id: string): Promise<boolean>;
  /** Answer other instances' requests: `stop(id)` resolves true when this instance ran `id` and has stopped it. Returns a function that stops answering. */
  serve(stop: (id: string) => Promise<boolean>): () => void;
}

/** How long a cancel waits for the instance that runs the response (ms). */
export const CANCEL_WAIT_MS = 2000;
