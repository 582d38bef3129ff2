import { GatewayError } from '../errors/gateway-error.js';
import type { Config } from '../config/schema.js';
import { satisfiesRequiredKeySet } from '../config/schema.js';
import { PROVIDER_FIELD_NAMES } from '../config/provider-fields.js';
import type { VirtualKey } from '../config/bootstrap.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { Target } from '../providers/types.js';
import type { HostGuard } from '../security/host-guard.js';
import { inherit } from './inherit.js';
import { compileSettingsHooks, setHooks, type GuardrailLookup } from './hooks.js';
import { compileQuery } from './query.js';
import { STAGE_SETTINGS, type NodeSettings, type PlanNode, type StageSetting, type StrategyNode, type TargetNode } from './types.js';

export interface PlanDeps {
  virtualKeys: ReadonlyMap<string, VirtualKey>;
  registry: ProviderRegistry;
  hostGuard: HostGuard;
  /** Stored guardrails, for string entries of input_guardrails / output_guardrails. */
  guardrails?: GuardrailLookup;
}

/** Target fields with their own property on Target; every other provider field goes to `extra`. */
const OWN_TARGET_FIELDS: ReadonlySet<string> = new Set(['api_key', 'custom_host', 'vendor_organization', 'vendor_project']);

/** Provider fields (from their field groups) that describe how to reach a provider; kept on the target, never inherited. */
const EXTRA_FIELDS = PROVIDER_FIELD_NAMES.filter((f) => !OWN_TARGET_FIELDS.has(f));

function resolveTarget(cfg: Config, settings: NodeSettings, path: string, deps: PlanDeps): Target {
  let vkId = cfg.virtual_key;
  let providerName = cfg.provider;
  // `@slug` names a stored credential (the catalog) when one has that id, else a provider.
  if (!vkId && providerName?.startsWith('@') && deps.virtualKeys.has(providerName.slice(1))) {
    vkId = providerName.slice(1);
    providerName = undefined;
  }
  let vk: VirtualKey | undefined;
  if (vkId) {
    vk = deps.virtualKeys.get(vkId.startsWith('@') ? vkId.slice(1) : vkId);
    if (!vk) throw new GatewayError('virtual_key_not_found', `No virtual key has the id "${vkId}".`, { param: `${path}.virtual_key` });
  }
  const name = providerName ?? vk?.provider;
  if (!name) {
    throw new GatewayError('missing_provider', `${path} names no provider: set provider (with api_key or custom_host) or virtual_key.`, {
      param: path,
    });
  }
  const provider = deps.registry.get(name, `${path}.provider`);
  const customHost = cfg.custom_host ?? vk?.custom_host ?? settings.custom_host;
  if (customHost !== undefined) deps.hostGuard.checkUrl(customHost);
  const target: Target = { provider: provider.descriptor.id };
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
  // Fail now, not per request, when the provider cannot be reached at all.
  deps.registry.baseUrl(provider, target);
  return target;
}

/**
 * Config fields whose pipeline stage does not exist yet. Accepting them would be a feature that
 * silently does nothing, so a config that sets one is refused.
 */
const NOT_YET = ['prompt_id'] as const;

function refuseUnsupported(cfg: Config, path: string): void {
  for (const k of NOT_YET) {
    const v = (cfg as Record<string, unknown>)[k];
    if (v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    throw new GatewayError('not_supported_yet', `${path}.${k} is not supported yet: this gateway does not use ${k.replace(/_/g, ' ')}s, so it refuses the config instead of ignoring it.`, {
      param: `${path}.${k}`,
    });
  }
}

function build(cfg: Config, parent: NodeSettings, path: string, deps: PlanDeps, isRoot: boolean): PlanNode {
  refuseUnsupported(cfg, path);
  const settings = inherit(parent, cfg as Partial<Record<keyof NodeSettings, unknown>>);
  if (!isRoot && !satisfiesRequiredKeySet({ ...cfg, ...settings })) {
    throw new GatewayError('invalid_config', `${path} satisfies none of the required key sets.`, {
      param: path,
      issues: [{ path: path.split(/\.|(?=\[)/).map((p) => (/^\[\d+\]$/.test(p) ? Number(p.slice(1, -1)) : p)), message: 'needs provider with api_key, virtual_key, strategy with targets, ...' }],
    });
  }
  const weight = cfg.weight ?? 1;
  const hooks = compileSettingsHooks(settings, path, deps.guardrails);
  const declares = STAGE_SETTINGS.filter((k) => (cfg as Record<string, unknown>)[k] !== undefined) as StageSetting[];
  const mode = cfg.strategy?.mode;
  if (!mode || (mode === 'single' && !cfg.targets)) {
    const target = resolveTarget(cfg, settings, path, deps);
    const node: TargetNode = { kind: 'target', path, weight, settings, declares, target, id: cfg.name ?? path };
    setHooks(node, hooks);
    if (cfg.name !== undefined) node.name = cfg.name;
    return node;
  }
  const strategy = cfg.strategy!;
  const children = (cfg.targets ?? []).map((t, i) => build(t, settings, `${path}.targets[${i}]`, deps, false));
  const node: StrategyNode = { kind: mode, path, weight, settings, declares, children };
  setHooks(node, hooks);
  if (cfg.name !== undefined) node.name = cfg.name;
  if (strategy.on_status_codes) node.on_status_codes = strategy.on_status_codes;
  if (strategy.hedge_after_ms !== undefined) node.hedge_after_ms = strategy.hedge_after_ms;
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
  return node;
}

/** A validated config → the plan tree, inheritance applied, every target resolved. Pure but for lookups. */
export function buildPlan(config: Config, deps: PlanDeps, rootPath = 'config'): PlanNode {
  return build(config, {}, rootPath, deps, true);
}
