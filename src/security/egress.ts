/**
 * The gateway's one way out. Every outbound HTTP call it makes for a request or a config (provider
 * base URLs and their built-in defaults, custom_host, hosts built from a region, a resource or an
 * endpoint name, token endpoints, JWKS, webhook, log and alert URLs) goes through a dispatcher made
 * here; no other file of src/ opens a socket or uses undici's values (a source scan in
 * test/security/egress-scan.test.ts fails when one does).
 *
 * The dispatcher's connector applies the HostGuard to the address actually dialled, on every new
 * connection, whatever field the URL came from:
 * - an IP literal host is checked before a socket is opened. The URL parser has already turned
 *   `2130706433`, `0177.0.0.1` or `0x7f.1` into `127.0.0.1`, and IPv4-mapped IPv6 is checked as
 *   the IPv4 address it is;
 * - a name is resolved by the guard's `lookup` and every address is checked before a byte is sent
 *   (a name that re-binds is checked again on its next connection);
 * - once connected, the address the socket reached is checked again: a backstop, so that a path
 *   that skipped the lookup still cannot talk to a refused address.
 * Built-in provider hosts resolve to public addresses, so guarding them costs a range check per new
 * connection (connections are pooled and kept alive); a private address is reachable only when
 * GATEWAY_TRUSTED_HOSTS lists it or the name.
 *
 * Redirects are not followed anywhere: the dispatcher has no redirect interceptor, and `fetch` here
 * asks for `redirect: 'manual'` and fails on a 3xx, so a public URL cannot bounce the gateway to a
 * private one.
 */
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { GatewayError } from '../errors/gateway-error.js';
import { customHostRefusal, type HostGuard } from './host-guard.js';

/** What the composition root holds: the dispatcher, a fetch over it, and a way to close it. */
export interface Egress {
  /** The one dispatcher for provider calls (undici's Dispatcher; pooled, keep-alive). */
  readonly dispatcher: Agent;
  /** `fetch` for token endpoints: the URL checked, no redirects, failures as GatewayErrors. */
  readonly fetch: typeof fetch;
  close(): Promise<void>;
}

/**
 * A connector (undici's `connect` function) that refuses what the guard refuses: IP literals before
 * dialling, names through `guard.lookup`, and the address reached once connected.
 */
function guardedConnector(guard: HostGuard, options: buildConnector.BuildOptions): buildConnector.connector {
  const dial = buildConnector({ ...options, lookup: guard.lookup });
  return (opts, callback) => {
    const early = guard.connectRefusal(opts.hostname);
    if (early) {
      process.nextTick(() => callback(early, null));
      return;
    }
    dial(opts, (err, socket) => {
      if (err) return callback(err, null);
      // An unknown remote address (the socket already gone) is refused too: never allowed by default.
      const late = guard.connectRefusal(opts.hostname, socket!.remoteAddress ?? '');
      if (late) {
        socket!.destroy();
        return callback(late, null);
      }
      callback(null, socket!);
    });
  };
}

/**
 * An undici Agent whose every connection goes through `guardedConnector`. `opts.connect` may hold
 * connect options (timeouts, TLS); a connector function of one's own would bypass the guard and is
 * refused.
 */
export function createEgressDispatcher(guard: HostGuard, opts: Agent.Options = {}): Agent {
  const { connect, ...rest } = opts;
  if (typeof connect === 'function') {
    throw new TypeError('createEgressDispatcher: a connector function of its own would bypass the host guard; pass connect options instead.');
  }
  return new Agent({ ...rest, connect: guardedConnector(guard, (connect ?? {}) as buildConnector.BuildOptions) });
}

/** The error a refused URL gets: the guard's own words (they name the host), naming the field `param`. */
function refused(e: unknown, param: string): GatewayError {
  const ge = customHostRefusal(e);
  return new GatewayError('custom_host_not_allowed', ge?.message, { param, cause: e });
}

/**
 * `fetch` through `dispatcher`: the URL is checked first (a 400 naming `param`), no redirect is
 * followed (a 3xx is upstream_invalid_response), and a transport failure is upstream_unreachable
 * without the socket's error code: a client-chosen URL must not turn the gateway into a port scanner
 * (the code, which tells a closed port from an open one, stays in the error's cause, for the log).
 */
export function createEgressFetch(dispatcher: Agent, guard: HostGuard, param: string): typeof fetch {
  const egress = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    try {
      guard.checkUrl(url.href, param);
    } catch (e) {
      throw refused(e, param);
    }
    let res: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      res = await undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), redirect: 'manual', dispatcher });
    } catch (e) {
      if (customHostRefusal(e)) throw refused(e, param);
      if (e instanceof Error && e.name === 'AbortError') throw e;
      throw new GatewayError('upstream_unreachable', `${url.origin} could not be reached.`, { cause: e });
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => undefined);
      throw new GatewayError('upstream_invalid_response', `${url.origin} answered ${res.status}; redirects are not followed.`);
    }
    return res as unknown as Response;
  };
  return egress as typeof fetch;
}

/** The egress of one gateway: one guarded dispatcher with `opts`, and a fetch for token endpoints over it. */
export function createEgress(guard: HostGuard, opts: Agent.Options = {}, fetchParam = 'token_uri'): Egress {
  const dispatcher = createEgressDispatcher(guard, opts);
  return { dispatcher, fetch: createEgressFetch(dispatcher, guard, fetchParam), close: () => dispatcher.close() };
}
