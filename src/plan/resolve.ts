import { buildPlan, type KeyScope, type PlanDeps } from './build-plan.js';
import type { PlanNode } from './types.js';
import { bearerToken, configFromHeaders, headerValue, refuseHeaders, REQUEST_HEADERS, type Headers } from '../config/headers.js';
import type { Config } from '../config/schema.js';
import type { VersionedLookup } from '../state/versioned-store.js';
import { Lru } from '../util/lru.js';
import { BuildRecorder, callerOf } from './build-recorder.js';
import { configSource, rootConfig } from './config-source.js';
import { planInputs, planKey, sameInputs } from './plan-inputs.js';

/**
 * A compiled plan and what it was built from: the saved config (id and version) and every virtual key
 * the builder looked up (id and version; 0 when it was absent, as an `@slug` that named a provider).
 * `seen*` are the two stores' versions when the entry was last known current: while neither store has
 * changed, a hit checks two numbers; after any write it re-reads the entries it was built from.
 */
interface CachedPlan {
  plan: PlanNode;
  configId: string | undefined;
  configVersion: number;
  keyIds: string[];
  keyVersions: number[];
  seenKeys: number;
  seenConfigs: number;
  /** The plan names stored guardrails: it is current only while the guardrail store has not changed. */
  guardrailsSeen: number | undefined;
  /**
   * Set when the builder looked up a virtual key or a stored guardrail: the plan then depends on who
   * asks (each (organisation, workspace) resolves ids in its own scope), so it serves only requests
   * of the caller it was built for (`callerOf`), and is rebuilt for another.
   */
  builtFor: string | undefined;
}

/**
 * Request headers → the plan to run. Sources, in order: `x-gateway-config` (inline JSON or a saved
 * config id), then loose headers (provider, virtual key, custom host...), which fill the config's root
 * where it does not set a field. Compiled plans are cached by their inputs, so the hot path neither
 * re-validates nor re-builds a plan it has seen; a cached plan whose saved config or virtual keys have
 * been written since it was built is built again (never served stale), and only that one.
 */
export class ConfigResolver {
  private readonly cache: Lru<CachedPlan>;
  /** The last plan served and the raw header values it was served for (see `resolve`). */
  private last: { values: (string | undefined)[]; entry: CachedPlan } | undefined;

  constructor(
    private readonly deps: PlanDeps,
    /** The saved-config store (read side). */
    private readonly saved: VersionedLookup<Config>,
    cacheSize = 1000,
  ) {
    this.cache = new Lru(cacheSize);
  }

  get cachedPlans(): number {
    return this.cache.size;
  }

  /** `caller`: the scope of the request's gateway key (which workspace's virtual keys it may use). */
  resolve(headers: Headers, caller?: KeyScope): PlanNode {
    refuseHeaders(headers);
    // The last plan served, checked by comparing the same raw header values: traffic that repeats
    // one config (the common case) neither builds the key string nor hashes it (an inline config
    // with guardrails is a header of several hundred characters).
    const last = this.last;
    if (last !== undefined && sameInputs(last.values, headers) && this.servable(last.entry, caller)) return last.entry.plan;
    const values = planInputs(headers);
    const key = planKey(values);
    // A plan built for one caller (it read a workspace's virtual key or stored guardrail) is kept
    // under the key plus that caller, so workspaces sending the same config each keep theirs.
    // The bare key holds unscoped plans only; one that cannot serve (stale: a saved config now names
    // a workspace's key) sends the lookup to the caller's key, and is dropped once that is compiled.
    // (Entries under the key plus a caller were built for that caller: being current is enough.)
    const bare = this.cache.get(key);
    let hit = bare !== undefined && this.current(bare) ? bare : undefined;
    if (hit === undefined) {
      const scoped = this.cache.get(`${key}\u0000${callerOf(caller)}`);
      if (scoped !== undefined && this.current(scoped)) hit = scoped;
    }
    if (hit !== undefined) {
      this.last = { values, entry: hit };
      return hit.plan;
    }
    const entry = this.compile(headers, caller);
    if (entry.builtFor === undefined) this.cache.set(key, entry);
    else {
      // A bare entry here is stale (a current one would have served): dropped, not kept beside this one.
      if (bare !== undefined) this.cache.delete(key);
      this.cache.set(`${key}\u0000${entry.builtFor}`, entry);
    }
    this.last = { values, entry };
    return entry.plan;
  }

  /** May `e` serve this caller now: nothing it was built from written since, and built for anyone or for this caller. */
  private servable(e: CachedPlan, caller: KeyScope | undefined): boolean {
    return this.current(e) && (e.builtFor === undefined || e.builtFor === callerOf(caller));
  }

  /** True when nothing the entry was built from has been written since. */
  private current(e: CachedPlan): boolean {
    if (e.guardrailsSeen !== undefined && e.guardrailsSeen !== this.deps.guardrailsVersion?.()) return false;
    const keys = this.deps.virtualKeys;
    const kv = keys.version;
    const cv = this.saved.version;
    if (e.seenKeys === kv && e.seenConfigs === cv) return true;
    if (e.configId !== undefined && (this.saved.get(e.configId)?.version ?? 0) !== e.configVersion) return false;
    for (let i = 0; i < e.keyIds.length; i++) {
      if ((keys.get(e.keyIds[i]!)?.version ?? 0) !== e.keyVersions[i]) return false;
    }
    e.seenKeys = kv;
    e.seenConfigs = cv;
    return true;
  }

  private compile(headers: Headers, caller: KeyScope | undefined): CachedPlan {
    const seenKeys = this.deps.virtualKeys.version;
    const seenConfigs = this.saved.version;
    const { base, configId, configVersion } = configSource(headerValue(headers, REQUEST_HEADERS.config), this.saved);
    const { config, headerFields } = rootConfig(base, configFromHeaders(headers), bearerToken(headers), this.deps.registry);
    const recorder = new BuildRecorder(this.deps, caller);
    const plan = buildPlan(config, { ...this.deps, virtualKeys: recorder.virtualKeys, guardrails: recorder.guardrails }, 'config', headerFields);
    const { keyIds, keyVersions, guardrailsSeen, builtFor } = recorder;
    return { plan, configId, configVersion, keyIds, keyVersions, seenKeys, seenConfigs, guardrailsSeen, builtFor };
  }
}
