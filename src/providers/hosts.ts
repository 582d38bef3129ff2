/**
 * Upstream URLs built from parts: a base URL (a provider default, an operator's base URL or a
 * custom_host) and a part a target names (a region). The part is checked against what it must be
 * and put in with the URL API, never pasted into the URL's text, so it can only ever be that part:
 * `x@127.0.0.1:1234/#` is refused, not turned into a user, a host and a port. What comes out is
 * the URL that is dialled, and the egress dispatcher checks the address it reaches.
 */
import { GatewayError } from '../errors/gateway-error.js';
import type { ProviderDescriptor, Target } from './types.js';

/** The placeholder a base URL may hold for the target's region. */
export const REGION_PLACEHOLDER = '{region}';
const ENCODED_PLACEHOLDER = '%7Bregion%7D';

function badRegion(param: string, region: string, example: string): GatewayError {
  return new GatewayError('invalid_config', `${param} must be a region name such as ${example}, got ${JSON.stringify(region)}.`, { param });
}

/** The region a target's hosts are built from: its field, else the provider's default. */
export function regionOf(descriptor: ProviderDescriptor, target: Target): string | undefined {
  const r = descriptor.region;
  if (!r) return undefined;
  const v = target.extra?.[r.field];
  return typeof v === 'string' ? v : r.default;
}

/**
 * The URL a target's custom_host stands for once its `{region}` is filled in: what the host guard
 * checks at validation (a custom_host whose region makes it an address it refuses is a 400 then,
 * not at connect time).
 */
export function customHostUrl(descriptor: ProviderDescriptor, target: Target, customHost: string): string {
  const r = descriptor.region;
  if (!r || !customHost.includes(REGION_PLACEHOLDER)) return customHost;
  const region = regionOf(descriptor, target);
  if (region === undefined) {
    throw new GatewayError('invalid_config', `custom_host holds ${REGION_PLACEHOLDER}, so ${r.field} is required.`, { param: r.field });
  }
  return withRegion(customHost, region, r.field, r.pattern, r.example).href;
}

/**
 * `base` with `{region}` replaced by `region` in its host and path. `region` must match `pattern`
 * (else a 400 naming `param`). The host is set through `URL.hostname`, whose parser re-reads it, and
 * then compared with what was asked for, so a region cannot change anything but its own label.
 */
export function withRegion(base: string, region: string, param: string, pattern: RegExp, example: string): URL {
  if (!pattern.test(region)) throw badRegion(param, region, example);
  const u = new URL(base);
  if (u.hostname.includes(REGION_PLACEHOLDER)) {
    const host = u.hostname.replaceAll(REGION_PLACEHOLDER, region);
    u.hostname = host;
    if (u.hostname !== host.toLowerCase()) throw badRegion(param, region, example);
  }
  if (u.pathname.includes(ENCODED_PLACEHOLDER)) u.pathname = u.pathname.replaceAll(ENCODED_PLACEHOLDER, region);
  return u;
}
