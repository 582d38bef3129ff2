import { PageCollector, type RequestLogPage, type RequestLogQuery, type RequestLogRecord, type RequestLogStore } from '../request-log-store.js';
import { observed, type RedisConnection } from './connection.js';

export interface RedisRequestLogStoreOptions {
  /** Key prefix (default `sluice:`). */
  prefix?: string;
  /** Records kept in the stream (MAXLEN ~, so Redis may keep up to one stream node more). */
  capacity: number;
}

export const REDIS_REQUEST_LOG_STORE = 'redis-request-log';

/** Where a prefix's records live: one stream, entries `r` → the record's JSON. Exported for tests. */
export const requestLogKey = (prefix: string): string => `${prefix}logs`;

/** Entries read per XREVRANGE call while a query walks the stream. */
const BATCH = 500;

/**
 * One capped Redis stream shared by every instance: `XADD key MAXLEN ~ capacity * r <json>` per
 * request, sent without waiting (a failure is counted and logged at most once per interval, never
 * seen by the request). A query walks the newest `capacity` entries with XREVRANGE in batches of
 * 500 and filters them here: its cost is bounded by the capacity (10,000 records ≈ 20 round trips
 * and 10,000 JSON parses), whatever the filters.
 */
export class RedisRequestLogStore implements RequestLogStore {
  readonly kind = 'redis' as const;
  readonly capacity: number;
  private readonly key: string;
  private readonly cap: string;

  constructor(
    private readonly conn: RedisConnection,
    opts: RedisRequestLogStoreOptions,
  ) {
    if (!Number.isInteger(opts.capacity) || opts.capacity < 1) throw new Error(`request log capacity must be a positive integer, got ${opts.capacity}`);
    this.capacity = opts.capacity;
    this.cap = String(opts.capacity);
    this.key = requestLogKey(opts.prefix ?? 'sluice:');
  }

  append(record: RequestLogRecord): void {
    const json = JSON.stringify(record);
    observed(this.conn, REDIS_REQUEST_LOG_STORE, 'append', () => this.conn.client.xadd(this.key, 'MAXLEN', '~', this.cap, '*', 'r', json)).catch(() => {
      // counted and logged by `observed`; the request is not told
    });
  }

  query(q: RequestLogQuery): Promise<RequestLogPage> {
    return observed(this.conn, REDIS_REQUEST_LOG_STORE, 'query', async () => {
      const c = new PageCollector(q);
      let end = '+';
      let left = this.capacity;
      while (left > 0) {
        const entries = await this.conn.client.xrevrange(this.key, end, '-', 'COUNT', Math.min(BATCH, left));
        for (const [, fields] of entries) {
          const json = fields[1];
          if (fields[0] === 'r' && json !== undefined) c.offer(JSON.parse(json) as RequestLogRecord);
        }
        left -= entries.length;
        if (entries.length < BATCH) break;
        end = `(${entries[entries.length - 1]![0]}`;
      }
      return c.page();
    });
  }

  close(): void {}
}
