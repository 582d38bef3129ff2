import type { Subscription } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';

export interface BackgroundLimits {
  /** Background responses running at once in this process (--background-max). */
  max: number;
  /** Of those, how many one gateway key may run (--background-max-per-key). */
  maxPerKey: number;
}

/**
 * The background responses this process runs: each one's subscription (unsubscribing aborts its
 * upstream call), bounded in all and per gateway key. A run is admitted before it starts (429
 * beyond a bound) and leaves when it ends or is cancelled.
 */
export class BackgroundRuns {
  private readonly runs = new Map<string, { key: string; sub: Subscription | undefined }>();
  private readonly perKey = new Map<string, number>();

  constructor(readonly limits: BackgroundLimits) {}

  get size(): number {
    return this.runs.size;
  }

  /** Holds a place for response `id` of gateway key `key`; throws 429 when a bound is reached. */
  admit(id: string, key: string): void {
    if (this.runs.size >= this.limits.max) {
      throw new GatewayError('too_many_background_responses', `This gateway runs ${this.limits.max} background responses at once (--background-max); retry when one has ended.`);
    }
    const mine = this.perKey.get(key) ?? 0;
    if (mine >= this.limits.maxPerKey) {
      throw new GatewayError('too_many_background_responses', `This gateway key runs ${this.limits.maxPerKey} background responses at once (--background-max-per-key); retry when one has ended.`);
    }
    this.runs.set(id, { key, sub: undefined });
    this.perKey.set(key, mine + 1);
  }

  /** The admitted run's subscription (a run that already ended has left: nothing is kept). */
  started(id: string, sub: Subscription): void {
    const run = this.runs.get(id);
    if (run) run.sub = sub;
  }

  /** The run ended (or was cancelled): its place is free. */
  leave(id: string): void {
    const run = this.runs.get(id);
    if (!run) return;
    this.runs.delete(id);
    const left = (this.perKey.get(run.key) ?? 1) - 1;
    if (left > 0) this.perKey.set(run.key, left);
    else this.perKey.delete(run.key);
  }

  /** Stops response `id` when this process runs it (its upstream call aborted); false when it does not. */
  cancel(id: string): boolean {
    const run = this.runs.get(id);
    if (!run) return false;
    this.leave(id);
    run.sub?.unsubscribe();
    return true;
  }

  /** Stops every run (shutdown). */
  close(): void {
    for (const id of [...this.runs.keys()]) this.cancel(id);
  }
}
