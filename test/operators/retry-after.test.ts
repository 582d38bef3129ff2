import { describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../src/operators/retry-after.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');

describe('retryAfterMs', () => {
  it.each<[string, Record<string, string> | undefined, number | undefined]>([
    ['no headers', undefined, undefined],
    ['neither header', { 'content-type': 'application/json' }, undefined],
    ['retry-after-ms, integer', { 'retry-after-ms': '250' }, 250],
    ['retry-after-ms, float', { 'retry-after-ms': '12.5' }, 12.5],
    ['retry-after-ms, zero', { 'retry-after-ms': '0' }, 0],
    ['retry-after-ms is read before retry-after', { 'retry-after-ms': '250', 'retry-after': '7' }, 250],
    ['retry-after-ms negative: falls back to retry-after', { 'retry-after-ms': '-5', 'retry-after': '2' }, 2000],
    ['retry-after-ms unreadable: falls back to retry-after', { 'retry-after-ms': 'soon', 'retry-after': '2' }, 2000],
    ['retry-after-ms empty: falls back to retry-after', { 'retry-after-ms': '', 'retry-after': '2' }, 2000],
    ['retry-after-ms blank and nothing else', { 'retry-after-ms': '  ' }, undefined],
    ['retry-after-ms unreadable and nothing else', { 'retry-after-ms': 'soon' }, undefined],
    ['retry-after seconds', { 'retry-after': '3' }, 3000],
    ['retry-after zero seconds', { 'retry-after': '0' }, 0],
    ['retry-after fractional seconds', { 'retry-after': '1.5' }, 1500],
    ['retry-after seconds with spaces', { 'retry-after': ' 4 ' }, 4000],
    ['retry-after HTTP date (IMF-fixdate) in the future', { 'retry-after': 'Sun, 01 Jun 2025 12:00:30 GMT' }, 30_000],
    ['retry-after HTTP date (RFC 850) in the future', { 'retry-after': 'Sunday, 01-Jun-25 12:00:05 GMT' }, 5000],
    ['retry-after HTTP date (asctime, which is GMT) in the future', { 'retry-after': 'Sun Jun  1 12:00:10 2025' }, 10_000],
    ['retry-after HTTP date in the past: no wait', { 'retry-after': 'Sat, 31 May 2025 12:00:00 GMT' }, 0],
    ['retry-after HTTP date equal to now: no wait', { 'retry-after': 'Sun, 01 Jun 2025 12:00:00 GMT' }, 0],
    ['retry-after garbage', { 'retry-after': 'soon' }, undefined],
    ['retry-after empty', { 'retry-after': '' }, undefined],
    ['retry-after negative seconds (not a date either)', { 'retry-after': '-5' }, undefined],
    ['retry-after text that V8 would read as a date', { 'retry-after': 'abc 1' }, undefined],
  ])('%s', (_name, headers, expected) => {
    expect(retryAfterMs(headers, NOW)).toBe(expected);
  });

  it('measures an HTTP date from the now handed in', () => {
    const h = { 'retry-after': 'Sun, 01 Jun 2025 12:00:30 GMT' };
    expect(retryAfterMs(h, NOW + 10_000)).toBe(20_000);
    expect(retryAfterMs(h, NOW + 60_000)).toBe(0);
  });
});
