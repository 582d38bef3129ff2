import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { noopStoreObserver, type StoreObserver } from '../store-events.js';
import { errorMessage, RateLimitedErrorLog, redactUrl } from './error-log.js';
import { Channels } from './channels.js';

/**
 * ioredis is loaded on first use, not at start: a gateway on the embedded memory default never pays
 * its ~7 MB of heap and module load time. (It is a CommonJS package, so a synchronous require works.)
 */
let RedisClass: typeof Redis | undefined;
function redisClass(): typeof Redis {
  RedisClass ??= (createRequire(import.meta.url)('ioredis') as { Redis: typeof Redis }).Redis;
  return RedisClass;
}

/** The logger calls stores make: pino's object form (`logger.warn({ msg, ... })`) fits. */
export interface StoreLogger {
  info(obj: Record<string, unknown>): void;
  warn(obj: Record<string, unknown>): void;
  error(obj: Record<string, unknown>): void;
}

export interface RedisConnectionOptions {
  observer?: StoreObserver;
  logger?: StoreLogger;
  /** A command with no reply after this long fails (default 250 ms): requests never wait on a stuck Redis. */
  commandTimeoutMs?: number;
  /** A connection attempt that does not complete in this long fails (default 2000 ms). */
  connectTimeoutMs?: number;
  /** Errors are logged at most once per interval (default 10 s), with the count suppressed. */
  errorIntervalMs?: number;
  /** Delay before reconnect attempt n (1-based). Default min(100 · 2^(n−1), 2000) ms, forever. */
  retryDelayMs?: (attempt: number) => number;
  /** Clock in ms for the error interval (tests inject one). */
  now?: () => number;
  /** CLIENT SETNAME, to tell gateway connections apart in CLIENT LIST. Default `sluice`. */
  connectionName?: string;
}

export const DEFAULT_COMMAND_TIMEOUT_MS = 250;

export function defaultRetryDelay(attempt: number): number {
  return Math.min(100 * 2 ** Math.max(0, attempt - 1), 2000);
}

/**
 * One ioredis client (and, on demand, one duplicate for pub/sub), configured so that a dead Redis
 * never holds a request up: no offline queue (a command fails at once while disconnected), no
 * retries of a command, a command timeout, and reconnection forever with capped backoff.
 */
export class RedisConnection {
  /** The URL with the password redacted. */
  readonly url: string;
  readonly client: Redis;
  readonly observer: StoreObserver;
  readonly errors: RateLimitedErrorLog;
  private readonly logger: StoreLogger | undefined;
  private readonly pubsub: Channels;
  private readonly readyListeners = new Set<() => void>();
  private readonly downListeners = new Set<() => void>();
  private wasReady = false;
  private downSince = 0;
  private everReady = false;
  private lastError: string | undefined;
  private closed = false;
  private readonly now: () => number;

  constructor(url: string, opts: RedisConnectionOptions = {}) {
    this.url = redactUrl(url);
    this.observer = opts.observer ?? noopStoreObserver;
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
    this.errors = new RateLimitedErrorLog((line) => this.logger?.warn(line), opts.errorIntervalMs, this.now);
    const retry = opts.retryDelayMs ?? defaultRetryDelay;
    this.client = new (redisClass())(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      connectTimeout: opts.connectTimeoutMs ?? 2000,
      retryStrategy: (times) => retry(times),
      connectionName: opts.connectionName ?? 'sluice',
      autoResendUnfulfilledCommands: false,
    });
    this.pubsub = new Channels({
      client: this.client,
      errors: this.errors,
      available: () => this.available(),
      onReady: (cb) => this.onReady(cb),
    });
    this.client.on('ready', () => this.onClientReady());
    this.client.on('close', () => this.onClientClose());
    this.client.on('error', (err: unknown) => {
      this.lastError = errorMessage(err);
      this.errors.report('redis', err);
    });
  }

  /** True while the connection is up and ready for commands. */
  available(): boolean {
    return !this.closed && this.client.status === 'ready';
  }

  /** Called on every (re)connect, once ready: the place to resync local mirrors. Returns an unsubscribe. */
  onReady(cb: () => void): () => void {
    this.readyListeners.add(cb);
    return () => this.readyListeners.delete(cb);
  }

  /** Called when a ready connection is lost. Returns an unsubscribe. */
  onDown(cb: () => void): () => void {
    this.downListeners.add(cb);
    return () => this.downListeners.delete(cb);
  }

  /**
   * For start-up: resolves once connected, or rejects after `timeoutMs` with a message naming the
   * (redacted) URL and the last error. The client keeps reconnecting in the background either way,
   * so a server started degraded recovers when Redis comes up.
   */
  waitUntilReady(timeoutMs: number): Promise<void> {
    if (this.available()) return Promise.resolve();
    if (this.closed) return Promise.reject(new Error(`Redis connection to ${this.url} is closed`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        const why = this.lastError ? `: ${this.lastError}` : '';
        reject(new Error(`Redis at ${this.url} is not reachable (not ready within ${timeoutMs} ms${why})`));
      }, timeoutMs);
      const off = this.onReady(() => {
        clearTimeout(timer);
        off();
        resolve();
      });
    });
  }

  /** The pub/sub connection (a duplicate of the client, created on first use, closed with it). */
  subscriber(): Redis {
    return this.pubsub.subscriber();
  }

  /**
   * Listen on a pub/sub channel. `onSync` is called whenever the subscription is confirmed and the
   * command connection is ready (after every reconnect of either): a store then reloads what it may
   * have missed, knowing that from now on no message is lost. Returns a function that stops listening.
   */
  listen(channel: string, onMessage: (message: string) => void, onSync: () => void): () => void {
    return this.pubsub.listen(channel, onMessage, onSync);
  }

  /** Report a failed store operation: counted always, logged at most once per interval. */
  reportError(source: string, err: unknown): void {
    this.errors.report(source, err);
  }

  /** Close both connections (pending commands are rejected). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.readyListeners.clear();
    this.downListeners.clear();
    const sub = this.pubsub.connection;
    await Promise.all([quit(this.client), sub ? quit(sub) : undefined]);
  }

  /** Call every listener (a copy: one may unsubscribe); one that throws is reported, not fatal. */
  private notify(listeners: Set<() => void>, source: string): void {
    for (const cb of [...listeners]) {
      try {
        cb();
      } catch (e) {
        this.errors.report(source, e);
      }
    }
  }

  private onClientReady(): void {
    const now = this.now();
    if (this.everReady) {
      const suppressed = this.errors.takeSuppressed();
      this.logger?.info({ msg: 'redis available again', url: this.url, down_ms: now - this.downSince, errors_suppressed: suppressed });
    } else {
      this.logger?.info({ msg: 'redis connected', url: this.url });
    }
    this.everReady = true;
    this.wasReady = true;
    this.observer.availability?.('redis', true);
    this.notify(this.readyListeners, 'redis ready listener');
  }

  private onClientClose(): void {
    if (!this.wasReady || this.closed) return;
    this.wasReady = false;
    this.downSince = this.now();
    this.logger?.warn({
      msg: 'redis unavailable: serving degraded (cache disabled, breaker state local) until it returns',
      url: this.url,
    });
    this.observer.availability?.('redis', false);
    this.notify(this.downListeners, 'redis down listener');
  }
}

async function quit(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 500).unref());
    await Promise.race([client.quit().then(() => undefined, () => undefined), timeout]);
  }
  client.disconnect();
}

/** Create the connection (it starts connecting at once). */
export function createRedis(url: string, opts: RedisConnectionOptions = {}): RedisConnection {
  return new RedisConnection(url, opts);
}

/** Time an operation and report it to the observer; failures also go to the rate-limited log. */
export async function observed<T>(conn: RedisConnection, store: string, op: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    const v = await fn();
    conn.observer.operation(store, op, (performance.now() - start) / 1000, true);
    return v;
  } catch (e) {
    conn.observer.operation(store, op, (performance.now() - start) / 1000, false, e);
    conn.reportError(`${store} ${op}`, e);
    throw e;
  }
}
