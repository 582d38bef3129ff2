import type { CancelChannel } from '../cancel-channel.js';
import { CANCEL_WAIT_MS } from '../cancel-channel.js';
import { observed, type RedisConnection } from './connection.js';

export interface RedisCancelChannelOptions {
  /** Prepended to the two channels' names (default `sluice:responses:`). */
  prefix?: string;
  /** How long `request` waits for the instance that runs the response (ms). */
  waitMs?: number;
}

const STORE = 'redis-response-cancel';

/**
 * Cancel requests over Redis pub/sub: `<prefix>cancel` carries the id every instance is asked to
 * stop, `<prefix>cancelled` the id the instance that ran it stopped. Each instance listens on both
 * from the start (the stores' start waits until it does), so a request never waits for an answer
 * published before it listened.
 */
export class RedisCancelChannel implements CancelChannel {
  private readonly ask: string;
  private readonly done: string;
  private readonly waitMs: number;
  private readonly waiting = new Map<string, Set<(stopped: boolean) => void>>();
  private readonly stopListening: (() => void)[];
  private stopper: ((id: string) => Promise<boolean>) | undefined;
  private readonly synced: Promise<unknown>;

  constructor(
    private readonly conn: RedisConnection,
    o: RedisCancelChannelOptions = {},
  ) {
    const prefix = o.prefix ?? 'sluice:responses:';
    this.ask = `${prefix}cancel`;
    this.done = `${prefix}cancelled`;
    this.waitMs = o.waitMs ?? CANCEL_WAIT_MS;
    const listening: Promise<void>[] = [];
    const listen = (channel: string, onMessage: (id: string) => void): (() => void) => {
      let synced!: () => void;
      listening.push(new Promise<void>((r) => (synced = r)));
      return this.conn.listen(channel, onMessage, () => synced());
    };
    this.stopListening = [listen(this.done, (id) => this.answered(id)), listen(this.ask, (id) => void this.stop(id))];
    this.synced = Promise.all(listening);
  }

  /** Resolves once both channels are subscribed (no request or answer is missed from then on); rejects after `timeoutMs`. */
  ready(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the response cancel channels were not subscribed within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([this.synced.then(() => undefined), late]).finally(() => clearTimeout(timer));
  }

  async request(id: string): Promise<boolean> {
    let off!: () => void;
    const stopped = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.waitMs);
      const waiter = (ran: boolean): void => {
        clearTimeout(timer);
        resolve(ran);
      };
      const set = this.waiting.get(id) ?? new Set();
      set.add(waiter);
      this.waiting.set(id, set);
      off = () => {
        clearTimeout(timer);
        set.delete(waiter);
        if (set.size === 0 && this.waiting.get(id) === set) this.waiting.delete(id);
      };
    });
    try {
      await observed(this.conn, STORE, 'publish', () => this.conn.client.publish(this.ask, id));
      return await stopped;
    } finally {
      off();
    }
  }

  serve(stop: (id: string) => Promise<boolean>): () => void {
    this.stopper = stop;
    return () => {
      if (this.stopper === stop) this.stopper = undefined;
    };
  }

  /** Asked to stop `id`: when this instance ran it, say so (a failure is reported; the requester's wait ends on its own). */
  private async stop(id: string): Promise<void> {
    try {
      if (this.stopper && (await this.stopper(id))) await observed(this.conn, STORE, 'publish', () => this.conn.client.publish(this.done, id));
    } catch (e) {
      this.conn.reportError(STORE, e);
    }
  }

  private answered(id: string): void {
    for (const w of this.waiting.get(id) ?? []) w(true);
  }

  /** Stops listening; requests still waiting resolve false. */
  close(): void {
    for (const off of this.stopListening) off();
    for (const set of this.waiting.values()) for (const w of set) w(false);
  }
}
