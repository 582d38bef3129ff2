import type { VirtualKey } from '../config/bootstrap.js';
import type { ProviderFields } from '../config/provider-fields.js';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * What the request itself says about a target that uses a virtual key. Everything here is client
 * input: loose headers, an inline config, or a saved config (written through the API by any key of
 * the workspace), never the key's owner.
 */
export interface ClientTarget {
  /** The provider the target's config names beside the key (`provider`, `x-gateway-provider`), if any. */
  provider: string | undefined;
  /** Its canonical id, when `provider` is set. */
  providerId: string | undefined;
  /** The target's own config fields. */
  fields: Readonly<Record<string, unknown>>;
  /** Where a `custom_host` inherited from a strategy level above was set (a config path or header), when one was. */
  inheritedHostFrom: string | undefined;
  /** The target's config path, e.g. `config.targets[1]`. */
  path: string;
  /** Fields that loose headers set (field → header), so that the error names what the client sent. */
  headerFields: ReadonlyMap<string, string> | undefined;
}

function refused(param: string, message: string): GatewayError {
  return new GatewayError('virtual_key_destination_fixed', message, { param });
}

/**
 * The one rule for where a stored secret goes: a virtual key's own fields say which provider, host,
 * path and account its secret is sent to, and a request that uses the key cannot change them. For
 * each destination field of the provider's descriptor (`ProviderFields.destinations`) that the
 * request sets (its config, a loose header, or a `custom_host` inherited from a strategy level), the
 * answer is a 400 naming the field, unless the key's `allow_client_destination` lets the client
 * choose it; the provider itself can never be changed. Refused rather than overridden by the key's
 * value: a client whose field is dropped would believe its request went where it said.
 *
 * Any value is refused, the key's own one too: comparing would tell a client the key's fields.
 */
export function refuseClientDestination(vkId: string, vk: VirtualKey, vkProviderId: string, accepted: ProviderFields, client: ClientTarget): void {
  if (client.provider !== undefined && client.providerId !== vkProviderId) {
    const param = client.headerFields?.get('provider') ?? `${client.path}.provider`;
    throw refused(
      param,
      `${param}: virtual key "${vkId}" is for provider "${vkProviderId}", and a request that uses it cannot send its credentials to provider "${client.provider}"; remove ${param}.`,
    );
  }
  const allow = vk.allow_client_destination;
  if (allow === true) return;
  for (const f of accepted.destinations) {
    if (Array.isArray(allow) && allow.includes(f)) continue;
    let param: string | undefined;
    let how = '';
    if (client.fields[f] !== undefined) {
      const header = client.headerFields?.get(f);
      param = header ?? `${client.path}.${f}`;
      if (header !== undefined) how = ` (set by header ${header})`;
    } else if (f === 'custom_host' && client.inheritedHostFrom !== undefined) {
      param = client.inheritedHostFrom;
      how = ` (inherited by ${client.path} from ${param})`;
    }
    if (param === undefined) continue;
    throw refused(
      param,
      `${param}: ${client.path} uses virtual key "${vkId}", whose fields fix where its credentials go, so the request cannot set ${f}${how}; ` +
        `remove it, or have the key's owner list ${f} in the key's allow_client_destination.`,
    );
  }
}
