import { GatewayError } from '../errors/gateway-error.js';
import { CONFIG_HEADERS, REQUEST_HEADERS } from '../config/headers.js';
import { parseConfig, satisfiesRequiredKeySet, type Config } from '../config/schema.js';
import type { VersionedLookup } from '../state/versioned-store.js';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../util/json-depth.js';
import type { PlanDeps } from './build-plan.js';

/** The config a request's headers give, before it is built into a plan. */

/** What a saved config id may look like (as pipelines/ file names); anything else is not an id. */
const CONFIG_ID = /^[A-Za-z0-9_.-]+$/;

/**
 * A root that names a provider, is otherwise valid, and fails only the required-key sets (no
 * credential, virtual key or custom host to reach it by): the credential is what is missing, so say
 * that rather than list the 18 sets.
 */
function missingCredential(e: unknown, merged: Record<string, unknown>): GatewayError | undefined {
  if (!(e instanceof GatewayError) || e.code !== 'invalid_config' || typeof merged.provider !== 'string') return undefined;
  if (e.issues?.length !== 1 || e.issues[0]!.path.length !== 1 || satisfiesRequiredKeySet(merged)) return undefined;
  return new GatewayError(
    'missing_provider_credential',
    `No credential for provider "${merged.provider}": send Authorization: Bearer <provider key> with the gateway key in x-gateway-api-key, or use x-gateway-virtual-key or a config with api_key.`,
    { param: 'authorization' },
  );
}

/** The config `x-gateway-config` names: inline JSON, or a saved config (its id and version then). */
export interface ConfigSource {
  base: Record<string, unknown> | undefined;
  configId: string | undefined;
  configVersion: number;
}

const headerError = (message: string): GatewayError =>
  new GatewayError('invalid_header', `Invalid header x-gateway-config: ${message}`, { param: REQUEST_HEADERS.config });

/** An inline `x-gateway-config` (it starts with `{` or `[`) → the object it holds. */
function inlineConfig(trimmed: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch {
    throw headerError('not valid JSON.');
  }
  if (jsonTooDeep(json)) {
    throw new GatewayError('json_too_deep', `Invalid header x-gateway-config: nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`, { param: REQUEST_HEADERS.config });
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw headerError('inline JSON must be an object.');
  return json as Record<string, unknown>;
}

/** The raw `x-gateway-config` value (absent: no base config) → the config it gives. */
export function configSource(raw: string | undefined, saved: VersionedLookup<Config>): ConfigSource {
  if (raw === undefined) return { base: undefined, configId: undefined, configVersion: 0 };
  const trimmed = raw.trim();
  const first = trimmed.charCodeAt(0);
  if (first === 0x7b /* { */ || first === 0x5b /* [ */) return { base: inlineConfig(trimmed), configId: undefined, configVersion: 0 };
  if (!CONFIG_ID.test(trimmed)) throw headerError('must be a JSON object or a saved config id (letters, digits, _ . -).');
  const entry = saved.get(trimmed);
  if (!entry) throw new GatewayError('config_not_found', `No saved config has the id "${trimmed}".`, { param: REQUEST_HEADERS.config });
  return { base: entry.value as Record<string, unknown>, configId: trimmed, configVersion: entry.version };
}

/**
 * The base config with the loose headers filling its root where it does not set a field, parsed;
 * and the root fields the loose headers set (field → header), so that errors about them name the header.
 */
export function rootConfig(
  base: Record<string, unknown> | undefined,
  loose: Record<string, unknown> | undefined,
  bearer: string | undefined,
  registry: PlanDeps['registry'],
): { config: Config; headerFields: Map<string, string> | undefined } {
  if (!base && !loose) throw new GatewayError('missing_provider');
  const merged: Record<string, unknown> = { ...loose, ...base };
  // The bearer token is the provider credential when the root names a provider that takes a key and
  // no credential is given (a provider that signs with other fields leaves Authorization alone).
  if (merged.provider !== undefined && merged.api_key === undefined && merged.virtual_key === undefined && bearer) {
    const named = typeof merged.provider === 'string' ? registry.find(merged.provider) : undefined;
    if (!named || named.descriptor.fields.names.has('api_key')) merged.api_key = bearer;
  }
  let headerFields: Map<string, string> | undefined;
  if (loose) {
    for (const [header, field] of CONFIG_HEADERS) {
      if (loose[field] !== undefined && base?.[field] === undefined) (headerFields ??= new Map()).set(field, header);
    }
  }
  try {
    return { config: parseConfig(merged), headerFields };
  } catch (e) {
    throw missingCredential(e, merged) ?? e;
  }
}
