import { z } from 'zod';
import { postedContext } from './context.js';
import { headerMap, httpUrl } from './params.js';
import { MAX_WEBHOOK_TIMEOUT_MS } from './webhook.js';
import type { CheckDef } from './types.js';

const Params = z.strictObject({
  logURL: httpUrl,
  headers: headerMap.default({}),
  /** Milliseconds. */
  timeout: z.number().int().min(1).max(MAX_WEBHOOK_TIMEOUT_MS).default(3_000),
});
type Params = z.infer<typeof Params>;

/**
 * POSTs the same context as webhook to `logURL` (host guard, `headers`, `timeout` ms) and passes
 * once the receiver answered 2xx. It cannot deliver (refused host, redirect, non-2xx, timeout) →
 * it throws, so the hook records an error (and fails closed unless `fail_on_error: false`).
 */
export const log: CheckDef<Params> = {
  io: true,
  id: 'log',
  params: Params,
  async run(input, p, deps, signal) {
    const res = await deps.http.request(p.logURL, {
      method: 'POST',
      headers: { ...p.headers, 'content-type': 'application/json' },
      body: JSON.stringify(postedContext(input)),
      timeoutMs: p.timeout,
      signal,
      maxBytes: 64 * 1024,
    });
    if (res.status < 200 || res.status >= 300) throw new Error(`log receiver ${new URL(p.logURL).host} answered ${res.status}`);
    return { verdict: true, data: { delivered: true } };
  },
};
