import type { Agent } from 'undici';
import { BootstrapError, type Bootstrap } from '../config/bootstrap.js';
import type { ServerOptions } from '../config/options.js';
import { defaultProviders, ProviderRegistry } from '../providers/registry.js';
import { createEgress, type Egress } from '../security/egress.js';
import { HostGuard, type ResolveHost } from '../security/host-guard.js';

/** The providers and the one way out to them. */
export interface Providers {
  registry: ProviderRegistry;
  /** Which hosts a URL from a config, a check or the options may reach. */
  hostGuard: HostGuard;
  /** Provider calls, token endpoints and the checks' HTTP client: one dispatcher, host-guarded. */
  egress: Egress;
}

/** The provider registry (base URLs from the bootstrap file, then the options), the host guard and the egress. */
export function buildProviders(options: ServerOptions, bootstrap: Bootstrap | undefined, resolveHost?: ResolveHost): Providers {
  const registry = new ProviderRegistry(defaultProviders(), {
    ...bootstrap?.provider_base_urls,
    ...options['provider-base-urls'],
  });
  const hostGuard = new HostGuard({ trusted: options['trusted-hosts'], ...(resolveHost ? { resolve: resolveHost } : {}) });
  // An operator's base URL is reached like any other: a private one needs GATEWAY_TRUSTED_HOSTS.
  // Said at start (for IP literals and localhost names) rather than on every request.
  for (const [id, url] of registry.baseUrlOverrides()) {
    try {
      hostGuard.checkUrl(url, `provider_base_urls.${id}`);
    } catch (e) {
      throw new BootstrapError(`${(e as Error).message} (GATEWAY_TRUSTED_HOSTS, --trusted-hosts)`);
    }
  }
  const agentOptions: Agent.Options = {
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: options['upstream-timeout'],
    bodyTimeout: options['stream-idle-timeout'],
    connections: 512,
    pipelining: 1,
  };
  // The one way out (src/security/egress.ts): provider calls, token endpoints and the checks' HTTP
  // client share one dispatcher whose connector applies the host guard to every connection.
  const egress = createEgress(hostGuard, agentOptions, 'cloud_c_service_account_json.token_uri');
  return { registry, hostGuard, egress };
}
