/**
 * The CheckDeps the composition root builds once: the guarded HTTP client over the same host guard
 * as `custom_host`, one JWKS cache, the clock, and whether validUrls may look URLs up (an operator
 * setting, off by default). `close` releases the client's sockets at shutdown.
 */
import type { HostGuard } from '../security/host-guard.js';
import { createCheckHttp } from './http.js';
import { JwksCache } from './jwks.js';
import type { CheckDeps } from './types.js';

export interface CheckDepsOptions {
  allowUrlLookups?: boolean;
  now?: () => number;
}

export function createCheckDeps(guard: HostGuard, o: CheckDepsOptions = {}): CheckDeps & { close(): Promise<void> } {
  const http = createCheckHttp(guard);
  return { now: o.now ?? Date.now, http, jwks: new JwksCache(), allowUrlLookups: o.allowUrlLookups ?? false, close: () => http.close() };
}
