import { CONFIG_HEADERS, headerValue, REQUEST_HEADERS, type Headers } from '../config/headers.js';

/** The request headers a plan is compiled from, as raw values: the plan cache's key and its quick check. */

/**
 * The plan cache's key: the raw value of every header that shapes the plan, absent ones marked
 * (\u0001; header values cannot hold control characters). Raw, so a hit validates nothing: the loose
 * headers are parsed only when a plan is compiled, and a failure is never cached.
 */
export function planKey(values: readonly (string | undefined)[]): string {
  let key = `${values[0] ?? '\u0001'}\u0000${values[1] ?? '\u0001'}`;
  for (let i = 2; i < values.length; i++) {
    if (values[i] !== undefined) key += `\u0000${i - 2}=${values[i]}`;
  }
  return key;
}

/** The raw values of the headers that shape a plan: config, authorization, then CONFIG_HEADERS in order. */
export function planInputs(headers: Headers): (string | undefined)[] {
  const out: (string | undefined)[] = [headerValue(headers, REQUEST_HEADERS.config), headerValue(headers, 'authorization')];
  for (let i = 0; i < CONFIG_HEADERS.length; i++) out.push(headerValue(headers, CONFIG_HEADERS[i]![0]));
  return out;
}

/** Are these the headers `values` were taken from (`planInputs`)? Compared value by value, no key built. */
export function sameInputs(values: readonly (string | undefined)[], headers: Headers): boolean {
  if (values[0] !== headerValue(headers, REQUEST_HEADERS.config) || values[1] !== headerValue(headers, 'authorization')) return false;
  for (let i = 0; i < CONFIG_HEADERS.length; i++) {
    if (values[i + 2] !== headerValue(headers, CONFIG_HEADERS[i]![0])) return false;
  }
  return true;
}
