import { PageCollector, type RequestLogPage, type RequestLogQuery, type RequestLogRecord, type RequestLogStore } from '../request-log-store.js';

/**
 * The embedded default: a ring of the last `capacity` records in this process. Appending is one
 * array write; a query walks the ring newest first (at most `capacity` records, no I/O).
 */
export class MemoryRequestLogStore implements RequestLogStore {
  readonly kind = 'memory' as const;
  private readonly ring: (RequestLogRecord | undefined)[];
  /** Where the next record goes. */
  private next = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`request log capacity must be a positive integer, got ${capacity}`);
    this.ring = new Array<RequestLogRecord | undefined>(capacity);
  }

  append(record: RequestLogRecord): void {
    this.ring[this.next] = record;
    this.next = this.next + 1 === this.capacity ? 0 : this.next + 1;
    if (this.size < this.capacity) this.size++;
  }

  query(q: RequestLogQuery): Promise<RequestLogPage> {
    const c = new PageCollector(q);
    for (let i = 1; i <= this.size; i++) {
      const at = (this.next - i + this.capacity) % this.capacity;
      c.offer(this.ring[at]!);
    }
    return Promise.resolve(c.page());
  }

  close(): void {}
}
