/**
 * Server-suggested wait from `retry-after-ms` (float ms; read first) or `retry-after` (seconds or an
 * HTTP date). Undefined when absent or unreadable. Pure: `now` is handed in.
 */
export function retryAfterMs(headers: Readonly<Record<string, string>> | undefined, now: number): number | undefined {
  if (!headers) return undefined;
  const ms = headers['retry-after-ms'];
  if (ms !== undefined) {
    const v = Number(ms);
    if (Number.isFinite(v) && v >= 0) return v;
  }
  const ra = headers['retry-after'];
  if (ra === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra) * 1000;
  const date = Date.parse(ra);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
