import type { Redis } from 'ioredis';
import type { RateLimitedErrorLog } from './error-log.js';

interface ChannelState {
  listeners: Set<ChannelListener>;
  /** Subscribed on the current subscriber connection (confirmed by Redis). */
  active: boolean;
}

interface ChannelListener {
  onMessage(message: string): void;
  onSync(): void;
}

/** What the channels need of their connection (RedisConnection): its client, error log, and readiness. */
export interface ChannelHost {
  readonly client: Redis;
  readonly errors: RateLimitedErrorLog;
  available(): boolean;
  onReady(cb: () => void): () => void;
}

/**
 * The pub/sub channels of one connection, on a duplicate of its client made on first use: who listens
 * on each, and whether Redis has confirmed the subscription on the current subscriber connection.
 */
export class Channels {
  private sub: Redis | undefined;
  private readonly channels = new Map<string, ChannelState>();

  constructor(private readonly host: ChannelHost) {}

  /** The subscriber connection, if made (to close it). */
  get connection(): Redis | undefined {
    return this.sub;
  }

  /** The pub/sub connection (a duplicate of the client, created on first use, closed with it). */
  subscriber(): Redis {
    if (!this.sub) {
      const sub = this.host.client.duplicate({
        connectionName: `${this.host.client.options.connectionName ?? 'sluice'}-sub`,
        // Subscriptions are (re)made by `listen` on every ready, once confirmed it resyncs.
        autoResubscribe: false,
        commandTimeout: undefined,
      });
      sub.on('ready', () => this.subscribeAll());
      sub.on('close', () => {
        for (const ch of this.channels.values()) ch.active = false;
      });
      sub.on('error', (err: unknown) => this.host.errors.report('redis-subscriber', err));
      sub.on('message', (channel: string, msg: string) => {
        const ch = this.channels.get(channel);
        if (!ch) return;
        for (const l of ch.listeners) {
          try {
            l.onMessage(msg);
          } catch (e) {
            this.host.errors.report(`message on ${channel}`, e);
          }
        }
      });
      this.sub = sub;
    }
    return this.sub;
  }

  /**
   * Listen on a pub/sub channel. `onSync` is called whenever the subscription is confirmed and the
   * command connection is ready (after every reconnect of either): a store then reloads what it may
   * have missed, knowing that from now on no message is lost. Returns a function that stops listening.
   */
  listen(channel: string, onMessage: (message: string) => void, onSync: () => void): () => void {
    const listener: ChannelListener = { onMessage, onSync };
    let ch = this.channels.get(channel);
    if (!ch) {
      ch = { listeners: new Set(), active: false };
      this.channels.set(channel, ch);
    }
    ch.listeners.add(listener);
    const sub = this.subscriber();
    if (ch.active) {
      if (this.host.available()) queueMicrotask(() => ch.listeners.has(listener) && listener.onSync());
    } else if (sub.status === 'ready') {
      this.subscribeOne(channel, ch);
    }
    const readyOff = this.host.onReady(() => {
      if (ch.active && ch.listeners.has(listener)) listener.onSync();
    });
    return () => {
      readyOff();
      ch.listeners.delete(listener);
      if (ch.listeners.size === 0) {
        this.channels.delete(channel);
        if (this.sub?.status === 'ready') this.sub.unsubscribe(channel).catch(() => {});
      }
    };
  }

  private subscribeAll(): void {
    for (const [name, ch] of this.channels) this.subscribeOne(name, ch);
  }

  private subscribeOne(name: string, ch: ChannelState): void {
    const sub = this.sub;
    if (!sub) return;
    sub.subscribe(name).then(
      () => {
        if (this.channels.get(name) !== ch || sub !== this.sub) return;
        ch.active = true;
        if (this.host.available()) for (const l of ch.listeners) l.onSync();
      },
      (err: unknown) => this.host.errors.report('redis-subscriber', err),
    );
  }
}
