import type { Bootstrap } from '../config/bootstrap.js';
import type { ServerOptions } from '../config/options.js';
import { checkSavedConfigs, loadPipelines } from '../config/pipelines.js';
import type { Config } from '../config/schema.js';
import { buildPlan, type PlanDeps } from '../plan/build-plan.js';
import { generateApiKey, type ApiKeyRecord } from '../security/api-keys.js';
import { MASTER_KEY_ENV, MasterKeyError, MasterKeyring, PREVIOUS_MASTER_KEYS_ENV } from '../security/master-key.js';
import type { Catalog } from '../state/catalog.js';
import { MemoryVersionedStore } from '../state/memory/versioned-store.js';
import { MemoryVirtualKeyStore } from '../state/memory/virtual-key-store.js';
import { createStores, type Stores } from '../state/stores.js';
import type { Logger } from '../util/log.js';
import type { Basics } from './basics.js';
import type { Providers } from './providers.js';

/** The gateway's state: the stores, the catalog over them, and the master key sealing secrets. */
export interface State {
  stores: Stores;
  /** Gateway keys, virtual keys and saved configs: seeded at start, editable while serving. */
  catalog: Catalog;
  masterKey: MasterKeyring | undefined;
  /** Set when no key was configured: printed once at start, never logged. */
  generatedKey: string | undefined;
}

/** What the state is seeded from beside the options and the bootstrap file. */
export interface StateSeeds {
  /** Saved configs; when absent they are read from options.pipelines. */
  savedConfigs?: Map<string, Config>;
  /** SLUICE_MASTER_KEY's text; SLUICE_MASTER_KEY_PREVIOUS's during a rotation. */
  masterKey?: string;
  previousMasterKeys?: string;
}

/**
 * The operator's gateway keys: GATEWAY_API_KEYS (admin, bound to no workspace), the bootstrap file's
 * api_keys, or when there are none a generated admin key.
 */
export function declaredApiKeys(options: ServerOptions, bootstrap: Bootstrap | undefined): { keys: { key: string; record: ApiKeyRecord }[]; generatedKey?: string } {
  const keys = options['api-keys'].map((key, i) => ({ key, record: { name: `env-${i}`, scopes: ['admin'] } as ApiKeyRecord }));
  for (const k of bootstrap?.api_keys ?? []) {
    const record: ApiKeyRecord = { name: k.name };
    if (k.workspace_id) record.workspace_id = k.workspace_id;
    if (k.organisation_id) record.organisation_id = k.organisation_id;
    if (k.scopes?.length) record.scopes = [...new Set(k.scopes)];
    keys.push({ key: k.key, record });
  }
  if (keys.length > 0) return { keys };
  const generatedKey = generateApiKey();
  return { keys: [{ key: generatedKey, record: { name: 'generated', scopes: ['admin'] } }], generatedKey };
}

/** The master key ring; a previous key without a current one, or a malformed one, stops the start. */
export function readMasterKey(seeds: StateSeeds): MasterKeyring | undefined {
  if (!seeds.masterKey && seeds.previousMasterKeys?.trim()) {
    throw new MasterKeyError(`${PREVIOUS_MASTER_KEYS_ENV} is set but ${MASTER_KEY_ENV} is not: a rotation needs the new master key in ${MASTER_KEY_ENV}`);
  }
  return seeds.masterKey ? MasterKeyring.parse(seeds.masterKey, seeds.previousMasterKeys) : undefined;
}

/** Keys, master key and saved configs (checked here, before any store is opened), then the stores. */
export function buildState(b: Basics, seeds: StateSeeds, providers: Providers): State {
  const { options, bootstrap, logger, telemetry } = b;
  const { keys, generatedKey } = declaredApiKeys(options, bootstrap);
  const masterKey = readMasterKey(seeds);
  const saved = seeds.savedConfigs ?? loadPipelines(options.pipelines, options.pipelines !== 'pipelines');
  const declaredVirtualKeys = bootstrap?.virtual_keys ?? {};
  // Against the bootstrap file's virtual keys: those made through the API are in the store, loaded by listen().
  const bootDeps: PlanDeps = { virtualKeys: new MemoryVirtualKeyStore(declaredVirtualKeys), registry: providers.registry, hostGuard: providers.hostGuard, guardrails: () => ({ checks: [] }) };
  checkSavedConfigs(saved, (config) => buildPlan(config, bootDeps), (line) => logger.warn(line));
  const stores = createStores({
    redisUrl: options.redis,
    cacheMaxBytes: options['cache-max-bytes'],
    requestLogSize: options['request-log-size'],
    responseMaxBytes: options['response-max-bytes'],
    responseTtlSeconds: options['response-ttl'],
    declaredKeys: keys,
    declaredVirtualKeys,
    masterKey,
    observer: {
      operation: (store, op, seconds, ok) => telemetry.storeOperation(store, op, seconds, ok),
      availability: (store, up) => logger[up ? 'info' : 'warn']({ msg: up ? 'store available' : 'store unavailable; serving degraded', store }),
    },
    logger: { info: (o) => logger.info(o), warn: (o) => logger.warn(o), error: (o) => logger.error(o) },
    onRemoteTransition: (id, t) => logger.info({ msg: 'circuit changed on another instance', circuit: id, from: t.from, to: t.to }),
  });
  const catalog: Catalog = { apiKeys: stores.apiKeys, virtualKeys: stores.virtualKeys, savedConfigs: new MemoryVersionedStore(saved) };
  return { stores, catalog, masterKey, generatedKey };
}

/**
 * Opens the stores (Redis unreachable: an error, or with --redis-optional a warning and local state
 * until it is), refuses stored virtual keys this gateway cannot open, and says what the state is.
 */
export async function startState(state: State, options: ServerOptions, logger: Logger): Promise<void> {
  const { stores, masterKey } = state;
  try {
    await stores.start(5000);
  } catch (e) {
    if (!options['redis-optional']) throw new Error(`${(e as Error).message}. Start Redis, or set GATEWAY_REDIS_OPTIONAL=true to serve degraded.`);
    logger.warn({ msg: 'Redis is not reachable at start; serving degraded (local state) until it is', error: (e as Error).message });
  }
  const unreadable = stores.unreadableVirtualKeys();
  if (unreadable.size > 0) {
    const [id, why] = unreadable.entries().next().value!;
    await stores.close();
    throw new Error(
      `Redis holds ${unreadable.size} virtual key(s) whose secrets this gateway cannot open (${id}: ${why}). Set ${MASTER_KEY_ENV} to the master key that sealed them (during a rotation: the new key in ${MASTER_KEY_ENV}, the one that sealed them in ${PREVIOUS_MASTER_KEYS_ENV}).`,
    );
  }
  if (masterKey && masterKey.previousIds.length > 0) {
    logger.info({
      msg: `${PREVIOUS_MASTER_KEYS_ENV} is set: secrets sealed under those keys are read, never sealed with; \`sluice rotate-master-key\` re-seals the stored ones under ${MASTER_KEY_ENV} once every instance reads it (docs/master-key-rotation.md)`,
      master_key_id: masterKey.id,
      previous_master_key_ids: masterKey.previousIds,
    });
  }
  if (stores.kind === 'memory') {
    logger.info({ msg: 'state is in memory: keys and virtual keys made through the API, guardrails, prompts, policies, usage counters and request logs live as long as this process (--redis keeps them)' });
  }
}
