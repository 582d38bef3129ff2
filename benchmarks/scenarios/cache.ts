import { CHAT_BODY, configHeaders, upstreamTarget, type Scenario } from '../scenario.js';

/** Every request after the first is a hit of the memory cache: the upstream is not called. */
export const cache: Scenario = {
  id: 'cache',
  title: 'The throughput request with a simple cache (memory store): every request after the first answered from the cache.',
  request: (up) => ({ headers: configHeaders({ cache: { mode: 'simple', max_age: 600 }, ...upstreamTarget(up) }), body: CHAT_BODY }),
  check: (a) => (a.headers['x-gateway-cache-status'] === 'HIT' ? undefined : `not a cache hit: x-gateway-cache-status ${String(a.headers['x-gateway-cache-status'])}`),
};
