import { fetch as undiciFetch } from 'undici';
import { GatewayError } from '../errors/gateway-error.js';
import { customHostRefusal, type HostGuard } from '../security/host-guard.js';
import type { Dispatchers } from './call.js';

/**
 * The `fetch` a provider's `prepare` step gets (a token endpoint): through the gateway's own
 * dispatchers. A URL on one of `trustedOrigins` (a cloud's default token endpoint) takes the trusted
 * pool; any other URL (a `token_uri` the operator wrote in a service account) is checked like a
 * custom_host: synchronously on the URL, then on every resolved address by the guarded pool.
 * Failures are GatewayErrors: custom_host_not_allowed when the guard refuses, else upstream_unreachable.
 */
export function createEgressFetch(dispatchers: Dispatchers, guard: HostGuard, trustedOrigins: Iterable<string>): typeof fetch {
  const trusted = new Set(trustedOrigins);
  const egress = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const isTrusted = trusted.has(url.origin);
    if (!isTrusted) {
      try {
        guard.checkUrl(url.href);
      } catch (e) {
        throw refused(url, e);
      }
    }
    try {
      const res = await undiciFetch(url, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher: isTrusted ? dispatchers.trusted : dispatchers.guarded,
      });
      return res as unknown as Response;
    } catch (e) {
      const refusal = customHostRefusal(e);
      if (refusal) throw refused(url, refusal);
      if (e instanceof Error && e.name === 'AbortError') throw e;
      const code = (e as { cause?: { code?: string } })?.cause?.code ?? 'error';
      throw new GatewayError('upstream_unreachable', `${url.origin} could not be reached (${code}).`, { cause: e });
    }
  };
  return egress as typeof fetch;
}

function refused(url: URL, e: unknown): GatewayError {
  const reason = e instanceof Error ? e.message.replace(/^custom_host /, '') : 'refused';
  return new GatewayError('custom_host_not_allowed', `The egress to ${url.origin} is not allowed: ${reason}`, { cause: e });
}
