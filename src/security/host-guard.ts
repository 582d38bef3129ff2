/**
 * The address policy of every outbound connection: no URL the gateway calls (a client's custom_host,
 * a host built from a region or an endpoint name, a provider default, a token endpoint, a webhook)
 * may become a way into the gateway's own network. Loopback, private, link-local and every other
 * non-public address is refused unless the operator lists it (or the host name) in
 * GATEWAY_TRUSTED_HOSTS, the one allow-list.
 *
 * Three entry points, all applied by the egress dispatcher (src/security/egress.ts):
 * - `checkUrl` — synchronous, on a URL string: scheme, IP literals, `localhost` names. For early,
 *   clear 400s at validation; not what keeps a connection out.
 * - `connectRefusal` — at connect time, on the host the socket is about to dial when it is an IP
 *   literal (a literal never reaches a lookup), and on the address a socket did connect to.
 * - `lookup` — plugged into net/tls `connect`: every resolved address of an untrusted name is checked
 *   at connect time, on the very addresses the socket will use, so a name that resolves (or
 *   re-binds) to a private address is refused before any byte is sent.
 */
import dns from 'node:dns';
import type net from 'node:net';
import { GatewayError } from '../errors/gateway-error.js';
import { embeddedV4, inNet, ownLabel, parseIp, parseTrustedNet, stripBrackets, unmap, type Bytes, type Net } from './ip-ranges.js';

/** `code` of the Error the guarded lookup fails with (it reaches the socket's 'error'). */
export const CUSTOM_HOST_FORBIDDEN = 'ECUSTOMHOSTFORBIDDEN';

const TRUSTED_HINT = 'which is not allowed unless it is listed in GATEWAY_TRUSTED_HOSTS';

/** The Error the guarded lookup fails with; `gatewayError` is what the client should be told. */
export class CustomHostForbiddenError extends Error implements NodeJS.ErrnoException {
  readonly code = CUSTOM_HOST_FORBIDDEN;
  readonly gatewayError: GatewayError;
  /** The resolved address that was refused (for logs; not part of the client message). */
  readonly address: string;
  readonly hostname: string;

  constructor(hostname: string, address: string, gatewayError: GatewayError) {
    super(`egress to ${hostname} (${address}) refused: ${gatewayError.message}`);
    this.name = 'CustomHostForbiddenError';
    this.hostname = hostname;
    this.address = address;
    this.gatewayError = gatewayError;
  }
}

/**
 * The GatewayError carried by a refused connect, found anywhere on `e`'s `cause` chain (undici and
 * fetch wrap socket errors), or undefined when `e` is not a custom-host refusal.
 */
export function customHostRefusal(e: unknown): GatewayError | undefined {
  const seen = new Set<unknown>();
  let cur: unknown = e;
  while (cur !== null && typeof cur === 'object' && !seen.has(cur)) {
    seen.add(cur);
    const c = cur as { code?: unknown; gatewayError?: unknown; cause?: unknown };
    if (c.code === CUSTOM_HOST_FORBIDDEN && c.gatewayError instanceof GatewayError) return c.gatewayError;
    if (cur instanceof GatewayError && cur.code === 'custom_host_not_allowed') return cur;
    cur = c.cause;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Host names

const LABEL = '[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?';
const HOST_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** Lower case, brackets and one trailing dot removed: the form names are compared in. */
function normalizeHost(name: string): string {
  let h = stripBrackets(name.trim().toLowerCase());
  if (h.endsWith('.') && !h.endsWith('..')) h = h.slice(0, -1);
  return h;
}

function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

// ---------------------------------------------------------------------------------------------

/** One resolved address, as dns.lookup gives it with `all: true`. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * Resolves a host name to its addresses (family 0: any). The default is dns.lookup; tests inject one
 * that maps made-up names to loopback, so no query leaves the machine.
 */
export type ResolveHost = (hostname: string, family: number) => Promise<readonly ResolvedAddress[]>;

const systemResolve: ResolveHost = (hostname, family) => dns.promises.lookup(hostname, { all: true, family });

export interface HostGuardOptions {
  /** Entries of GATEWAY_TRUSTED_HOSTS: IPs, CIDRs (IPv4 or IPv6), or exact host names. */
  trusted: string[];
  /** How names are resolved at connect time; default dns.lookup. */
  resolve?: ResolveHost;
}

/** The address policy (see the top of this file), with the operator's trusted hosts. */
export class HostGuard {
  private readonly nets: Net[] = [];
  private readonly names = new Set<string>();
  private readonly resolve: ResolveHost;

  /**
   * A connect-time `lookup` (the signature `net.connect` / `tls.connect` expect): resolves with
   * dns.lookup and fails with a CustomHostForbiddenError (code ECUSTOMHOSTFORBIDDEN) when the
   * name is not trusted and any resolved address is not allowed.
   */
  readonly lookup: net.LookupFunction;

  /** @throws Error naming the entry when an entry is not an IP, a valid CIDR or a host name. */
  constructor(opts: HostGuardOptions) {
    for (const raw of opts.trusted) {
      const entry = raw.trim();
      if (entry === '') continue;
      if (entry.includes('/') || parseIp(entry)) {
        this.nets.push(parseTrustedNet(entry));
        continue;
      }
      const name = normalizeHost(entry);
      if (!HOST_NAME.test(name)) {
        throw new Error(
          `GATEWAY_TRUSTED_HOSTS: invalid entry "${entry}" (expected an IP, a CIDR such as 10.0.0.0/8, or a host name without scheme or port).`,
        );
      }
      this.names.add(name);
    }
    this.resolve = opts.resolve ?? systemResolve;
    this.lookup = (hostname, options, callback) => this.guardedLookup(hostname, options, callback);
  }

  /** From GATEWAY_TRUSTED_HOSTS: a comma-separated list; unset or empty trusts nothing. */
  static fromEnv(value: string | undefined, resolve?: ResolveHost): HostGuard {
    const trusted = (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
    return new HostGuard(resolve ? { trusted, resolve } : { trusted });
  }

  /** True when `host` (case-insensitive, brackets and trailing dot ignored) is a trusted name. */
  isHostTrusted(host: string): boolean {
    return this.names.has(normalizeHost(host));
  }

  /** Public addresses are allowed; non-public ones only inside a trusted IP/CIDR. Non-IPs are not. */
  isAddressAllowed(ip: string): boolean {
    return this.refusedAs(ip) === null;
  }

  /**
   * Synchronous check of a URL string the gateway is to call; `param` (default `custom_host`) is
   * the field it came from, named in the message and the error.
   * @throws GatewayError custom_host_not_allowed
   */
  checkUrl(url: string, param = 'custom_host'): void {
    const refuse = (message: string): GatewayError => new GatewayError('custom_host_not_allowed', message, { param });
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw refuse(`${param} is not a valid URL.`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      throw refuse(`${param} must be an http: or https: URL (got ${u.protocol}).`);
    }
    const host = normalizeHost(u.hostname);
    if (host === '') throw refuse(`${param} has no host.`);
    if (this.names.has(host)) return;
    if (parseIp(host)) {
      const label = this.refusedAs(host);
      if (label !== null) throw refuse(`${param} ${u.hostname} is a ${label} address, ${TRUSTED_HINT}.`);
      return;
    }
    if (isLocalhostName(host)) {
      // Counts as loopback; the resolved addresses are checked again at connect time.
      if (!this.isAddressAllowed('127.0.0.1') && !this.isAddressAllowed('::1')) {
        throw refuse(`${param} ${u.hostname} is a loopback address, ${TRUSTED_HINT}.`);
      }
    }
    // Other names are checked on their resolved addresses at connect time (`lookup`).
  }

  /**
   * The connect-time check of one socket. `hostname` is the host it dials; `address`, when known,
   * the address it reached. A trusted name is allowed whatever it resolves to; otherwise an IP
   * literal host, and the reached address, must be allowed. A name without `address` is left to
   * `lookup`. Returns the refusal to fail the connection with, or undefined.
   */
  connectRefusal(hostname: string, address?: string): CustomHostForbiddenError | undefined {
    if (this.isHostTrusted(hostname)) return undefined;
    const literal = parseIp(hostname) !== null;
    const ip = address ?? (literal ? hostname : undefined);
    if (ip === undefined) return undefined;
    const label = this.refusedAs(ip);
    if (label === null) return undefined;
    const what = literal ? `${hostname} is a ${label} address` : `${hostname} resolves to a ${label} address`;
    return new CustomHostForbiddenError(hostname, ip, connectRefused(what));
  }

  /** The label of why `ip` is refused, or null when it is allowed. */
  private refusedAs(ip: string): string | null {
    const parsed = parseIp(ip);
    if (!parsed) return 'invalid';
    const addr = unmap(parsed);
    const own = ownLabel(addr);
    if (own !== null && !this.isTrustedAddr(addr)) return own;
    const v4 = embeddedV4(addr);
    if (v4) {
      const inner = ownLabel(v4);
      if (inner !== null && !this.isTrustedAddr(v4) && !this.isTrustedAddr(addr)) return inner;
    }
    return null;
  }

  private isTrustedAddr(addr: Bytes): boolean {
    return this.nets.some((n) => inNet(addr, n));
  }

  private guardedLookup(
    hostname: string,
    options: dns.LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
  ): void {
    const wantAll = options.all === true;
    const trustedName = this.isHostTrusted(hostname);
    const fail = (e: NodeJS.ErrnoException): void => callback(e, wantAll ? [] : '');
    this.resolve(hostname, familyOf(options.family)).then(
      (addresses) => {
        if (addresses.length === 0) {
          return fail(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }));
        }
        if (!trustedName) {
          for (const { address } of addresses) {
            const label = this.refusedAs(address);
            if (label !== null) return fail(new CustomHostForbiddenError(hostname, address, connectRefused(`${hostname} resolves to a ${label} address`)));
          }
        }
        if (wantAll) return callback(null, addresses.map(({ address, family }) => ({ address, family })));
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => fail(err),
    );
  }
}

/** dns.LookupOptions' family (a number, or 'IPv4' / 'IPv6' in newer typings) as 0, 4 or 6. */
function familyOf(f: number | string | undefined): number {
  return f === 4 || f === 'IPv4' ? 4 : f === 6 || f === 'IPv6' ? 6 : 0;
}

/**
 * A refusal at connect time. The host may have come from any field (a custom_host, a region, a
 * provider's default), which the socket does not know: the message names the host instead.
 */
function connectRefused(what: string): GatewayError {
  return new GatewayError('custom_host_not_allowed', `The upstream host ${what}, ${TRUSTED_HINT}.`);
}
