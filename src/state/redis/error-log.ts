/** What a Redis connection logs: its URL without the password, and its errors, rate-limited. */

export const DEFAULT_ERROR_INTERVAL_MS = 10_000;

/** The URL with any password replaced, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(unparseable Redis URL)';
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Logs the first error of each interval, with the number of errors suppressed since the line
 * before, so a dead Redis under load writes one line per interval, never one per request.
 */
export class RateLimitedErrorLog {
  private lastLoggedAt = -Infinity;
  private suppressed = 0;
  private total = 0;

  constructor(
    private readonly log: (line: Record<string, unknown>) => void,
    readonly intervalMs = DEFAULT_ERROR_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Errors seen in all (for tests and metrics). */
  get count(): number {
    return this.total;
  }

  report(source: string, err: unknown, extra: Record<string, unknown> = {}): void {
    this.total++;
    const now = this.now();
    if (now - this.lastLoggedAt < this.intervalMs) {
      this.suppressed++;
      return;
    }
    this.log({
      msg: 'redis error',
      source,
      err: errorMessage(err),
      suppressed: this.suppressed,
      interval_ms: this.intervalMs,
      ...extra,
    });
    this.suppressed = 0;
    this.lastLoggedAt = now;
  }

  /** Hand back the count suppressed since the last line and reset it (on recovery). */
  takeSuppressed(): number {
    const n = this.suppressed;
    this.suppressed = 0;
    return n;
  }
}
