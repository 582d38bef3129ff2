import { CHAT_BODY, configHeaders, upstreamTarget, type Scenario } from '../scenario.js';

/** The resilience a production config declares on a single target; the upstream never fails. */
export const routing: Scenario = {
  id: 'routing',
  title: 'The throughput request as an inline config with retry (2 attempts), a request timeout (10 s) and a circuit breaker on its one target.',
  request: (up) => ({
    headers: configHeaders({ retry: { attempts: 2 }, request_timeout: 10_000, cb_config: { failure_threshold: 5, cooldown_interval: 30_000 }, ...upstreamTarget(up) }),
    body: CHAT_BODY,
  }),
};
