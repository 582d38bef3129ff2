/**
 * The CheckDeps the composition root builds once: the guarded HTTP client over the gateway's egress
 * dispatcher and host guard, one JWKS cache, the clock, and whether validUrls may look URLs up (an
 * operator setting, off by default). `close` releases the client's own sockets, if it has any.
 */
import type { Dispatcher } from 'undici';
import type { HostGuard } from '../security/host-guard.js';
import { createCheckHttp } from './http.js';
import { JwksCache } from './jwks.js';
import type { CheckDeps } from './types.js';

export interface CheckDepsOptions {
  allowUrlLookups?: boolean;
  now?: () => number;
  /** The gateway's egress dispatcher; absent, the client makes one of its own. */
  dispatcher?: Dispatcher;
}

export function createCheckDeps(guard: HostGuard, o: CheckDepsOptions = {}): CheckDeps & { close(): Promise<void> } {
  const http = createCheckHttp(guard, o.dispatcher);
  return { now: o.now ?? Date.now, http, jwks: new JwksCache(), allowUrlLookups: o.allowUrlLookups ?? false, close: () => http.close() };
}
