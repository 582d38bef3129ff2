import { GatewayError } from '../errors/gateway-error.js';
import { buildPlan, type GuardrailLookup, type KeyScope, type PlanDeps } from './build-plan.js';
import type { PlanNode } from './types.js';
import { memoByObject } from '../util/memo.js';
import { bearerToken, CONFIG_HEADERS, configFromHeaders, headerValue, refuseHeaders, REQUEST_HEADERS, type Headers } from '../config/headers.js';
import { parseConfig, satisfiesRequiredKeySet, type Config } from '../config/schema.js';
import type { VirtualKey } from '../config/bootstrap.js';
import type { Versioned, VersionedLookup } from '../state/versioned-store.js';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../util/json-depth.js';
import { virtualKeyCandidates } from '../state/virtual-key-store.js';

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

/**
 * A small LRU: Map keeps insertion order; a hit moves the entry to the end. The entry is re-inserted
 * under the key string it was stored with, not the caller's freshly built one: an old Map pointing at
 * a per-request string would keep it alive into the old generation on every hit (GC pressure).
 */
class Lru<V> {
  private readonly map = new Map<string, { key: string; value: V }>();
  constructor(private readonly max: number) {}
  get(k: string): V | undefined {
    const e = this.map.get(k);
    if (e === undefined) return undefined;
    this.map.delete(e.key);
    this.map.set(e.key, e);
    return e.value;
  }
  set(k: string, v: V): void {
    this.map.set(k, { key: k, value: v });
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
  delete(k: string): void {
    this.map.delete(k);
  }
  get size(): number {
    return this.map.size;
  }
}

/**
 * The plan cache's key: the raw value of every header that shapes the plan, absent ones marked
 * (\u0001; header values cannot hold control characters). Raw, so a hit validates nothing: the loose
 * headers are parsed only when a plan is compiled, and a failure is never cached.
 */
function planKey(values: readonly (string | undefined)[]): string {
  let key = `${values[0] ?? '\u0001'}\u0000${values[1] ?? '\u0001'}`;
  for (let i = 2; i < values.length; i++) {
    if (values[i] !== undefined) key += `\u0000${i - 2}=${values[i]}`;
  }
  return key;
}

/** The raw values of the headers that shape a plan: config, authorization, then CONFIG_HEADERS in order. */
function planInputs(headers: Headers): (string | undefined)[] {
  const out: (string | undefined)[] = [headerValue(headers, REQUEST_HEADERS.config), headerValue(headers, 'authorization')];
  for (let i = 0; i < CONFIG_HEADERS.length; i++) out.push(headerValue(headers, CONFIG_HEADERS[i]![0]));
  return out;
}

/** Are these the headers `values` were taken from (`planInputs`)? Compared value by value, no key built. */
function sameInputs(values: readonly (string | undefined)[], headers: Headers): boolean {
  if (values[0] !== headerValue(headers, REQUEST_HEADERS.config) || values[1] !== headerValue(headers, 'authorization')) return false;
  for (let i = 0; i < CONFIG_HEADERS.length; i++) {
    if (values[i + 2] !== headerValue(headers, CONFIG_HEADERS[i]![0])) return false;
  }
  return true;
}

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
 * What of a caller a scoped plan depends on, made once per caller object (a request's caller is its
 * gateway key's record, the same object on every request with that key; a key's scope never changes).
 */
const callerKey = memoByObject((c: KeyScope & { scopes?: readonly string[] }): string =>
  c.workspace_id === undefined && c.organisation_id === undefined
    ? `\u0000\u0000${c.scopes?.includes('admin') === true ? 'admin' : ''}` // tenancy.ts `usableBy`: an unbound admin key uses more
    : `${JSON.stringify(c.workspace_id ?? null)}\u0000${JSON.stringify(c.organisation_id ?? null)}`,
);
const callerOf = (c: KeyScope | undefined): string => (c === undefined ? '\u0000' : callerKey(c));

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
    const raw = headerValue(headers, REQUEST_HEADERS.config);
    const loose = configFromHeaders(headers);
    const bearer = bearerToken(headers);
    let base: Record<string, unknown> | undefined;
    let configId: string | undefined;
    let configVersion = 0;
    if (raw !== undefined) {
      const trimmed = raw.trim();
      const first = trimmed.charCodeAt(0);
      if (first === 0x7b /* { */ || first === 0x5b /* [ */) {
        let json: unknown;
        try {
          json = JSON.parse(trimmed);
        } catch {
          throw new GatewayError('invalid_header', 'Invalid header x-gateway-config: not valid JSON.', { param: REQUEST_HEADERS.config });
        }
        if (jsonTooDeep(json)) {
          throw new GatewayError('json_too_deep', `Invalid header x-gateway-config: nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`, { param: REQUEST_HEADERS.config });
        }
        if (json === null || typeof json !== 'object' || Array.isArray(json)) {
          throw new GatewayError('invalid_header', 'Invalid header x-gateway-config: inline JSON must be an object.', { param: REQUEST_HEADERS.config });
        }
        base = json as Record<string, unknown>;
      } else if (!CONFIG_ID.test(trimmed)) {
        throw new GatewayError(
          'invalid_header',
          'Invalid header x-gateway-config: must be a JSON object or a saved config id (letters, digits, _ . -).',
          { param: REQUEST_HEADERS.config },
        );
      } else {
        const saved = this.saved.get(trimmed);
        if (!saved) {
          throw new GatewayError('config_not_found', `No saved config has the id "${trimmed}".`, { param: REQUEST_HEADERS.config });
        }
        base = saved.value as Record<string, unknown>;
        configId = trimmed;
        configVersion = saved.version;
      }
    }
    if (!base && !loose) throw new GatewayError('missing_provider');
    const merged: Record<string, unknown> = { ...loose, ...base };
    // The bearer token is the provider credential when the root names a provider that takes a key and
    // no credential is given (a provider that signs with other fields leaves Authorization alone).
    if (merged.provider !== undefined && merged.api_key === undefined && merged.virtual_key === undefined && bearer) {
      const named = typeof merged.provider === 'string' ? this.deps.registry.find(merged.provider) : undefined;
      if (!named || named.descriptor.fields.names.has('api_key')) merged.api_key = bearer;
    }
    // Root fields set by loose headers (not by the config): errors about them name the header.
    let headerFields: Map<string, string> | undefined;
    if (loose) {
      for (const [header, field] of CONFIG_HEADERS) {
        if (loose[field] !== undefined && base?.[field] === undefined) (headerFields ??= new Map()).set(field, header);
      }
    }
    let config: Config;
    try {
      config = parseConfig(merged);
    } catch (e) {
      throw missingCredential(e, merged) ?? e;
    }
    // The builder reads virtual keys through a view that looks an id up in the caller's scope (its
    // workspace's key, its organisation's, then the bootstrap file's: another scope's is never
    // tried, so it is as absent as an unknown one, a 404, or `@id` taken as a provider name) and
    // notes every ref it tried and the version it found there (0: absent), so the plan is rebuilt
    // when any of them is written. Which refs are tried depends on the caller, so the plan is built
    // for this caller (a key bound to no scope too: a plan it built must not serve a scoped caller,
    // whose own workspace may have a key with that id).
    const keyIds: string[] = [];
    const keyVersions: number[] = [];
    let builtFor: string | undefined;
    const store = this.deps.virtualKeys;
    const recording: VersionedLookup<VirtualKey> = {
      get version() {
        return store.version;
      },
      get(id: string): Versioned<VirtualKey> | undefined {
        const refs = virtualKeyCandidates(id, caller);
        builtFor = callerOf(caller);
        for (const ref of refs) {
          const e = store.get(ref);
          keyIds.push(ref);
          keyVersions.push(e?.version ?? 0);
          if (e) return e;
        }
        return undefined;
      },
    };
    // And stored guardrails through one that notes that the plan used any (their store's version then)
    // and looks them up in the caller's scope: a workspace's key resolves only what it may see, so the
    // plan is built for this caller.
    let guardrailsSeen: number | undefined;
    const lookup = this.deps.guardrails;
    const guardrails: GuardrailLookup | undefined = lookup
      ? (idOrSlug, versionId) => {
          guardrailsSeen ??= this.deps.guardrailsVersion?.() ?? 0;
          builtFor = callerOf(caller);
          return lookup(idOrSlug, versionId, caller);
        }
      : undefined;
    const plan = buildPlan(config, { ...this.deps, virtualKeys: recording, guardrails }, 'config', headerFields);
    return { plan, configId, configVersion, keyIds, keyVersions, seenKeys, seenConfigs, guardrailsSeen, builtFor };
  }
}
