import { GatewayError } from '../errors/gateway-error.js';
import type { Config } from '../config/schema.js';
import { satisfiesRequiredKeySet } from '../config/schema.js';
import { destinationsNotAccepted, fieldsNotAccepted, PROVIDER_FIELD_NAMES, type ProviderFields } from '../config/provider-fields.js';
import type { VirtualKey } from '../config/bootstrap.js';
import type { ProviderRegistry } from '../providers/registry.js';
import { customHostUrl } from '../providers/hosts.js';
import type { Target } from '../providers/types.js';
import type { HostGuard } from '../security/host-guard.js';
import type { VersionedLookup } from '../state/versioned-store.js';
import { inherit } from './inherit.js';
import { refuseClientDestination } from './key-destination.js';
import { compileSettingsHooks, setHooks, type GuardrailLookup } from './hooks.js';
import { compileQuery } from './query.js';
import { STAGE_SETTINGS, type NodeSettings, type PlanNode, type PromptRef, type StageSetting, type StrategyNode, type TargetNode } from './types.js';

export type { GuardrailLookup };

/** Where a virtual key and a requesting gateway key live: a workspace and/or an organisation. */
export interface KeyScope {
  workspace_id?: string | undefined;
  organisation_id?: string | undefined;
}

export interface PlanDeps {
  /**
   * The virtual-key store (read side); the resolver hands in a view that looks ids up in the
   * requesting key's scope (state/virtual-key-store.ts `virtualKeyCandidates`) and records what a
   * plan read.
   */
  virtualKeys: VersionedLookup<VirtualKey>;
  registry: ProviderRegistry;
  hostGuard: HostGuard;
  /** Stored guardrails, for string entries of input_guardrails / output_guardrails. */
  guardrails?: GuardrailLookup;
  /** The guardrail store's version (changes on every write), so plans naming stored guardrails are rebuilt. */
  guardrailsVersion?: () => number;
}

/** Target fields with their own property on Target; every other provider field goes to `extra`. */
const OWN_TARGET_FIELDS: ReadonlySet<string> = new Set(['api_key', 'custom_host', 'vendor_organization', 'vendor_project']);

/** Provider fields (from their field groups) that describe how to reach a provider; kept on the target, never inherited. */
const EXTRA_FIELDS = PROVIDER_FIELD_NAMES.filter((f) => !OWN_TARGET_FIELDS.has(f));

/**
 * Where the root's fields came from when loose headers set them: field → header name, so that an
 * error about such a field names the header the client sent rather than a config path it never wrote.
 */
export type HeaderFields = ReadonlyMap<string, string>;

/** Provider fields a strategy node may carry: `custom_host` is an inherited setting, `api_key` comes from `Authorization`. */
const STRATEGY_PROVIDER_FIELDS: ReadonlySet<string> = new Set(['api_key', 'custom_host']);

/** `config.targets[1].x` → `['config', 'targets', 1, 'x']` (an issue's path). */
function pathOf(param: string): (string | number)[] {
  return param.split(/\.|(?=\[)/).map((p) => (/^\[\d+\]$/.test(p) ? Number(p.slice(1, -1)) : p));
}

function notUsed(field: string, param: string, why: string): GatewayError {
  return new GatewayError('invalid_config', `${param}: ${why}; the field is refused rather than ignored.`, {
    param,
    issues: [{ path: pathOf(param), message: `${field} is not used here`, code: 'unrecognized_keys' }],
  });
}

/**
 * A provider field the chosen provider does not use is a 400 naming it (config path, bootstrap path of
 * a virtual key's field, or the header that set it), never a field silently dropped: a request that
 * went out without the credential the client thought it gave is worse than a clear refusal.
 */
function refuseUnusedFields(
  id: string,
  accepted: ProviderFields,
  cfg: Config,
  vk: VirtualKey | undefined,
  vkId: string | undefined,
  path: string,
  headerFields: HeaderFields | undefined,
): void {
  const uses = `it uses ${[...accepted.names].join(', ')}`;
  const own = fieldsNotAccepted(accepted, cfg as Record<string, unknown>);
  if (own.length > 0) {
    const f = own[0]!;
    const header = headerFields?.get(f);
    const param = header ?? `${path}.${f}`;
    throw notUsed(f, param, `provider "${id}" does not use ${header ? `${f} (set by header ${header})` : f}; ${uses}`);
  }
  if (vk) {
    const fromKey = fieldsNotAccepted(accepted, vk as Record<string, unknown>);
    if (fromKey.length > 0) {
      const f = fromKey[0]!;
      throw notUsed(f, `virtual_keys.${vkId}.${f}`, `virtual key "${vkId}" (used by ${path}) sets ${f}, which provider "${id}" does not use; ${uses}`);
    }
    const allows = destinationsNotAccepted(accepted, vk.allow_client_destination);
    if (allows.length > 0) {
      const param = `virtual_keys.${vkId}.allow_client_destination`;
      throw notUsed(allows[0]!, param, `virtual key "${vkId}" (used by ${path}) allows clients to set ${allows[0]}, which is not a destination field of provider "${id}" (those are ${accepted.destinations.join(', ')})`);
    }
  }
}

/** A strategy node reaches no provider itself, and provider fields are never inherited: one set there would be ignored. */
function refuseStrategyFields(cfg: Config, path: string, headerFields: HeaderFields | undefined): void {
  for (const f of PROVIDER_FIELD_NAMES) {
    if (STRATEGY_PROVIDER_FIELDS.has(f) || (cfg as Record<string, unknown>)[f] === undefined) continue;
    const header = headerFields?.get(f);
    throw notUsed(f, header ?? `${path}.${f}`, `${path} has a strategy, and provider fields such as ${f} are not inherited by its targets: set it on the target that uses it`);
  }
}

/** The virtual key a target uses (by virtual_key, or `@slug` when a stored key has that id) and the provider it names itself. */
function targetKey(cfg: Config, path: string, deps: PlanDeps): { vkId?: string; vk?: VirtualKey; providerName?: string } {
  let vkId = cfg.virtual_key;
  let providerName = cfg.provider;
  // `@slug` names a stored credential (the catalog) when one has that id, else a provider.
  if (!vkId && providerName?.startsWith('@') && deps.virtualKeys.get(providerName.slice(1)) !== undefined) {
    vkId = providerName.slice(1);
    providerName = undefined;
  }
  if (!vkId) return { providerName };
  if (vkId.startsWith('@')) vkId = vkId.slice(1);
  const vk = deps.virtualKeys.get(vkId)?.value;
  if (!vk) throw new GatewayError('virtual_key_not_found', `No virtual key has the id "${vkId}".`, { param: `${path}.virtual_key` });
  return { vkId, vk, providerName };
}

/** The target's credential and fields: the config's own, else its virtual key's. */
function targetOf(providerId: string, cfg: Config, vk: VirtualKey | undefined, customHost: string | undefined): Target {
  const target: Target = { provider: providerId };
  const apiKey = cfg.api_key ?? vk?.api_key;
  if (apiKey !== undefined) target.api_key = apiKey;
  if (customHost !== undefined) target.custom_host = customHost;
  const org = cfg.vendor_organization ?? vk?.vendor_organization;
  if (org !== undefined) target.vendor_organization = org;
  const project = cfg.vendor_project ?? vk?.vendor_project;
  if (project !== undefined) target.vendor_project = project;
  let extra: Record<string, unknown> | undefined;
  for (const f of EXTRA_FIELDS) {
    const v = (cfg as Record<string, unknown>)[f] ?? (vk as Record<string, unknown> | undefined)?.[f];
    if (v !== undefined) (extra ??= {})[f] = v;
  }
  if (extra) target.extra = extra;
  return target;
}

function resolveTarget(
  cfg: Config,
  settings: NodeSettings,
  path: string,
  deps: PlanDeps,
  headerFields: HeaderFields | undefined,
  hostFrom: string | undefined,
): Target {
  const { vkId, vk, providerName } = targetKey(cfg, path, deps);
  const name = vk?.provider ?? providerName;
  if (!name) {
    throw new GatewayError('missing_provider', `${path} names no provider: set provider (with api_key or custom_host) or virtual_key.`, {
      param: path,
    });
  }
  const provider = deps.registry.get(name, vk ? `virtual_keys.${vkId}.provider` : `${path}.provider`);
  const accepted = provider.descriptor.fields;
  refuseUnusedFields(provider.descriptor.id, accepted, cfg, vk, vkId, path, headerFields);
  // An inherited custom_host is a setting of the level above: it reaches only providers that take one.
  const inherited = accepted.names.has('custom_host') ? settings.custom_host : undefined;
  if (vk) {
    refuseClientDestination(vkId!, vk, provider.descriptor.id, accepted, {
      provider: providerName,
      providerId: providerName === undefined ? undefined : deps.registry.get(providerName, headerFields?.get('provider') ?? `${path}.provider`).descriptor.id,
      fields: cfg as Record<string, unknown>,
      inheritedHostFrom: inherited !== undefined ? hostFrom : undefined,
      path,
      headerFields,
    });
  }
  // The request's own or inherited host before the key's: one reaching here beside a key is one the key allows.
  const customHost = cfg.custom_host ?? inherited ?? vk?.custom_host;
  const target = targetOf(provider.descriptor.id, cfg, vk, customHost);
  // The URL the target reaches, `{region}` filled in, is checked; the address it dials is checked
  // again at connect time by the egress dispatcher.
  if (customHost !== undefined) deps.hostGuard.checkUrl(customHostUrl(provider.descriptor, target, customHost));
  // Fail now, not per request, when the provider cannot be reached at all.
  deps.registry.baseUrl(provider, target);
  return target;
}

/**
 * `prompt_id` → the prompt the request renders. At the root only: the template is rendered once,
 * before routing, so guardrails, the cache key and every target see the same rendered request; a
 * target that names one is refused (it would be a second prompt for one request). `<id or slug>@<version_id>`
 * pins a version. Whether the prompt exists is known per request (the store is scoped to the key).
 */
function promptOf(cfg: Config, path: string, isRoot: boolean): PromptRef | undefined {
  const raw = cfg.prompt_id;
  if (raw === undefined) return undefined;
  const param = `${path}.prompt_id`;
  if (!isRoot) {
    throw new GatewayError('invalid_config', `${param}: a prompt template is rendered once, before routing; set prompt_id at the config's root, not on a target.`, {
      param,
      issues: [{ path: pathOf(param), message: 'prompt_id is allowed at the root only' }],
    });
  }
  const at = raw.indexOf('@');
  const ref = at < 0 ? raw : raw.slice(0, at);
  const version = at < 0 ? undefined : raw.slice(at + 1);
  if (ref === '' || version === '' || version?.includes('@')) {
    throw new GatewayError('invalid_config', `${param}: "${raw}" is not a prompt: give its id or slug, or "<id or slug>@<version_id>" to pin a version.`, {
      param,
      issues: [{ path: pathOf(param), message: 'expected <id or slug> or <id or slug>@<version_id>' }],
    });
  }
  return version === undefined ? { ref, param } : { ref, version_id: version, param };
}

/** A strategy's own settings → its node, checked against the node's children (built already). */
function applyStrategy(node: StrategyNode, cfg: Config, path: string): void {
  const strategy = cfg.strategy!;
  const { kind: mode, children } = node;
  // The spec puts on_status_codes both on the config object and in its strategy: either is taken,
  // and two different lists on one object are a 400 rather than one silently winning.
  if (cfg.on_status_codes && strategy.on_status_codes && JSON.stringify(cfg.on_status_codes) !== JSON.stringify(strategy.on_status_codes)) {
    throw new GatewayError('invalid_config', `${path} sets on_status_codes twice, differently (beside strategy and in it): keep one.`, {
      param: `${path}.on_status_codes`,
    });
  }
  const onStatusCodes = strategy.on_status_codes ?? cfg.on_status_codes;
  if (onStatusCodes) node.on_status_codes = onStatusCodes;
  if (strategy.hedge_after_ms !== undefined) node.hedge_after_ms = strategy.hedge_after_ms;
  if (strategy.algorithm === 'least_latency') node.algorithm = strategy.algorithm;
  if (mode === 'loadbalance' && !children.some((c) => c.weight > 0)) {
    throw new GatewayError('invalid_config', `${path}: a loadbalance needs at least one target with weight > 0.`, {
      param: `${path}.targets`,
    });
  }
  if (mode === 'conditional') {
    const names = new Set(children.map((c) => c.name).filter((n): n is string => n !== undefined));
    const wanted = [...(strategy.conditions ?? []).map((c) => c.then), strategy.default!];
    for (const w of wanted) {
      if (!names.has(w)) {
        throw new GatewayError('unknown_target', `${path}: no target is named "${w}".`, { param: `${path}.strategy` });
      }
    }
    // Queries are compiled (and so validated) now; run time compiles them once more, cached per node.
    strategy.conditions?.forEach((c, i) => compileQuery(c.query, `${path}.strategy.conditions[${i}].query`));
    node.conditions = strategy.conditions as StrategyNode['conditions'];
    node.default = strategy.default;
  }
}

/**
 * `hostFrom`: where the custom_host in `parent` was set (a config path, or the header), so that an
 * error about an inherited one names the place the client wrote it.
 */
function build(cfg: Config, parent: NodeSettings, path: string, deps: PlanDeps, isRoot: boolean, headerFields?: HeaderFields, hostFrom?: string): PlanNode {
  const prompt = promptOf(cfg, path, isRoot);
  const settings = inherit(parent, cfg as Partial<Record<keyof NodeSettings, unknown>>);
  const ownHostFrom = cfg.custom_host !== undefined ? (headerFields?.get('custom_host') ?? `${path}.custom_host`) : hostFrom;
  if (!isRoot && !satisfiesRequiredKeySet({ ...cfg, ...settings })) {
    throw new GatewayError('invalid_config', `${path} satisfies none of the required key sets.`, {
      param: path,
      issues: [{ path: pathOf(path), message: 'needs provider with api_key, virtual_key, strategy with targets, ...' }],
    });
  }
  const weight = cfg.weight ?? 1;
  const hooks = compileSettingsHooks(settings, path, deps.guardrails);
  const declares = STAGE_SETTINGS.filter((k) => (cfg as Record<string, unknown>)[k] !== undefined) as StageSetting[];
  const mode = cfg.strategy?.mode;
  if (cfg.on_status_codes !== undefined && mode !== 'fallback') {
    throw new GatewayError('invalid_config', `${path}.on_status_codes sets the codes a fallback moves on; it is only allowed beside strategy.mode "fallback" (mode is ${mode ? `"${mode}"` : 'not set'}).`, {
      param: `${path}.on_status_codes`,
    });
  }
  if (!mode || (mode === 'single' && !cfg.targets)) {
    const target = resolveTarget(cfg, settings, path, deps, headerFields, hostFrom);
    const node: TargetNode = { kind: 'target', path, weight, settings, declares, target, id: cfg.name ?? path };
    if (prompt) node.prompt = prompt;
    setHooks(node, hooks);
    if (cfg.name !== undefined) node.name = cfg.name;
    return node;
  }
  refuseStrategyFields(cfg, path, headerFields);
  const children = (cfg.targets ?? []).map((t, i) => build(t, settings, `${path}.targets[${i}]`, deps, false, undefined, ownHostFrom));
  const node: StrategyNode = { kind: mode, path, weight, settings, declares, children };
  if (prompt) node.prompt = prompt;
  setHooks(node, hooks);
  if (cfg.name !== undefined) node.name = cfg.name;
  applyStrategy(node, cfg, path);
  return node;
}

/**
 * A validated config → the plan tree, inheritance applied, every target resolved. Pure but for lookups.
 * `headerFields` says which of the root's fields loose headers set (errors then name the header).
 */
export function buildPlan(config: Config, deps: PlanDeps, rootPath = 'config', headerFields?: HeaderFields): PlanNode {
  return build(config, {}, rootPath, deps, true, headerFields);
}
