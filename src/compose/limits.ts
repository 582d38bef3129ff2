import { BootstrapError } from '../config/bootstrap.js';
import { PriceTable } from '../pricing/prices.js';
import type { CheckHttp } from '../checks/http.js';
import { UsageLimits } from '../limits/service.js';
import type { Basics } from './basics.js';
import type { Providers } from './providers.js';
import type { State } from './state.js';

/** How long an alert webhook call may take. */
const ALERT_WEBHOOK_TIMEOUT_MS = 5000;

/**
 * Usage limits and the ledger: every answer is priced (x-gateway-cost, the log's cost); requests
 * that match an active policy reserve their estimate and settle with the reported usage. The price
 * table is the defaults with the bootstrap file's `prices` over them (an unknown provider stops the
 * start); alerts go to --usage-limit-alert-webhook, a URL the host guard must allow.
 */
export function buildUsageLimits(b: Basics, providers: Providers, state: State, http: CheckHttp): UsageLimits {
  const { options, bootstrap, logger, telemetry, now } = b;
  const { registry, hostGuard } = providers;
  const prices = new PriceTable(bootstrap?.prices, (name) => {
    const p = registry.find(name);
    if (!p) throw new BootstrapError(`bootstrap is invalid:\n  prices.${name}: unknown provider; known: ${registry.ids().join(', ')}`);
    return p.descriptor.id;
  });
  const webhook = options['usage-limit-alert-webhook'];
  if (webhook !== undefined) {
    try {
      hostGuard.checkUrl(webhook, '--usage-limit-alert-webhook (GATEWAY_USAGE_LIMIT_ALERT_WEBHOOK)');
    } catch (e) {
      throw new Error((e as Error).message);
    }
  }
  return new UsageLimits({
    policies: state.stores.policies,
    counters: state.stores.usage,
    prices,
    telemetry,
    logger: { warn: (o) => logger.warn(o) },
    now,
    onStoreError: options['usage-limits-on-store-error'],
    ...(webhook !== undefined ? { webhook: { url: webhook, http, timeoutMs: ALERT_WEBHOOK_TIMEOUT_MS } } : {}),
  });
}
