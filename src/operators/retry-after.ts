/**
 * The three HTTP-date forms (RFC 9110 §5.6.7): IMF-fixdate, RFC 850, asctime (GMT, without a zone).
 * Checked before Date.parse, which in V8 reads nearly anything as a date ("-5", "abc 1" → 2001).
 */
const HTTP_DATE =
  /^\s*(?:[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT|[A-Za-z]{6,9}, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT|([A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}))\s*$/;

/**
 * Server-suggested wait from `retry-after-ms` (float ms; read first) or `retry-after` (seconds or an
 * HTTP date). Undefined when absent or unreadable. Pure: `now` is handed in.
 */
export function retryAfterMs(headers: Readonly<Record<string, string>> | undefined, now: number): number | undefined {
  if (!headers) return undefined;
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && ms.trim() !== '') {
    const v = Number(ms);
    if (Number.isFinite(v) && v >= 0) return v;
  }
  const ra = headers['retry-after'];
  if (ra === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra) * 1000;
  const m = HTTP_DATE.exec(ra);
  if (!m) return undefined;
  const date = Date.parse(m[1] ? `${m[1]} GMT` : ra);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
