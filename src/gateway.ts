import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent } from 'undici';
import { createHandler, endInFlight } from './http/app.js';
import type { Socket } from 'node:net';
import { BootstrapError, type Bootstrap } from './config/bootstrap.js';
import { PriceTable } from './pricing/prices.js';
import { UsageLimits } from './limits/service.js';
import { usageLimit } from './operators/usage-limit.js';
import type { ServerOptions } from './config/options.js';
import { describeGatewayError, loadPipelines, PipelineError } from './config/pipelines.js';
import { ConfigResolver } from './plan/resolve.js';
import type { Config } from './config/schema.js';
import { createLogger, type Logger } from './util/log.js';
import { buildPlan, type GuardrailLookup, type PlanDeps } from './plan/build-plan.js';
import { defaultProviders, ProviderRegistry } from './providers/registry.js';
import { generateApiKey, type ApiKeyRecord } from './security/api-keys.js';
import { createEgress } from './security/egress.js';
import { HostGuard, type ResolveHost } from './security/host-guard.js';
import { GatewayError } from './errors/gateway-error.js';
import { PrometheusTelemetry } from './metrics/prometheus.js';
import { createStores, type Stores } from './state/stores.js';
import type { Catalog } from './state/catalog.js';
import { MemoryVersionedStore } from './state/memory/versioned-store.js';
import { MemoryVirtualKeyStore } from './state/memory/virtual-key-store.js';
import { MASTER_KEY_ENV, MasterKeyError, MasterKeyring, PREVIOUS_MASTER_KEYS_ENV } from './security/master-key.js';
import type { HotRoute } from './http/router.js';
import { embedLocal } from './cache/local-embedder.js';
import { providerEmbedder } from './pipeline/provider-embedder.js';
import type { PipelineDeps } from './pipeline/context.js';
import { checksValidator, guardrailLookup, GuardrailsService, type ValidateChecks } from './management/guardrails.js';
import { PoliciesService } from './management/policies.js';
import { PromptsService } from './management/prompts.js';
import { callerScope } from './management/common.js';
import { PromptRenderer } from './pipeline/prompt.js';
import { ApiKeysService } from './management/api-keys.js';
import { virtualKeyChecker, VirtualKeysService } from './management/virtual-keys.js';
import { createCheckDeps } from './checks/deps.js';
import { resolveCheck } from './checks/registry.js';
import type { HookStageDeps } from './operators/request-hooks.js';
import { hooksSummary } from './http/request-log.js';

export interface GatewayInit {
  options: ServerOptions;
  /** Clock in ms (tests pass a fake one for breaker cooldowns). */
  now?: () => number;
  random?: () => number;
  bootstrap?: Bootstrap;
  logger?: Logger;
  /** Saved configs; when absent they are read from options.pipelines. */
  savedConfigs?: Map<string, Config>;
  /** More hot routes (method, path pattern, handler) beside the proxied endpoints. */
  routes?: readonly HotRoute[];
  /** Validates a stored guardrail's checks (the check library's validator); default: no check is known. */
  validateChecks?: ValidateChecks;
  /**
   * The master key's text (`SLUICE_MASTER_KEY`: 32 bytes, hex or base64) that seals virtual keys'
   * secrets at rest; without one, the API refuses to store secrets. A malformed one stops the start.
   */
  masterKey?: string;
  /**
   * Previous master keys' text (`SLUICE_MASTER_KEY_PREVIOUS`, comma-separated) during a rotation:
   * secrets sealed under them are read, never sealed with them. Needs `masterKey`.
   */
  previousMasterKeys?: string;
  /** How the host guard resolves names at connect time; default dns.lookup (tests map names to loopback). */
  resolveHost?: ResolveHost;
}

export interface Gateway {
  server: Server;
  stores: Stores;
  /** Gateway keys, virtual keys and saved configs: seeded at start, editable while serving. */
  catalog: Catalog;
  logger: Logger;
  /** Set when no key was configured: printed once at start, never logged. */
  generatedKey?: string;
  listen(port?: number, host?: string): Promise<AddressInfo>;
  /**
   * Drain and stop. At once: /ready answers 503 and responses say `connection: close`. For
   * `drainDelayMs` (default 0; `sluice serve` passes --drain-delay on SIGTERM) new connections are
   * still accepted, so a load balancer sees the 503 and stops sending; then the listener closes and
   * in-flight requests may finish until `timeoutMs` after the call. Those still running then are ended
   * with 503 shutting_down (an `event: error` frame on a started stream) and every connection is closed.
   */
  shutdown(timeoutMs?: number, drainDelayMs?: number): Promise<void>;
}

/**
 * How often Node's http server looks for connections over the header and request limits: a quarter
 * of the shorter limit, between 25 ms and 1 s. Node's default (30 s) would let a 20 s limit run to
 * 50 s; the check walks only the connections still receiving a request.
 */
export function connectionsCheckingIntervalMs(headersMs: number, requestMs: number): number {
  return Math.max(25, Math.min(1000, Math.floor(Math.min(headersMs, requestMs) / 4)));
}

/** How long an alert webhook call may take. */
const ALERT_WEBHOOK_TIMEOUT_MS = 5000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The composition root: stores, registry, providers, dispatchers, resolver, app. */
export function createGateway(init: GatewayInit): Gateway {
  const { options, bootstrap } = init;
  const logger = init.logger ?? createLogger(options['log-level']);

  // GATEWAY_API_KEYS and the generated key are the operator's own: admin, bound to no workspace.
  const apiKeys: { key: string; record: ApiKeyRecord }[] = options['api-keys'].map((key, i) => ({ key, record: { name: `env-${i}`, scopes: ['admin'] } }));
  for (const k of bootstrap?.api_keys ?? []) {
    const record: ApiKeyRecord = { name: k.name };
    if (k.workspace_id) record.workspace_id = k.workspace_id;
    if (k.organisation_id) record.organisation_id = k.organisation_id;
    if (k.scopes?.length) record.scopes = [...new Set(k.scopes)];
    apiKeys.push({ key: k.key, record });
  }
  let generatedKey: string | undefined;
  if (apiKeys.length === 0) {
    generatedKey = generateApiKey();
    apiKeys.push({ key: generatedKey, record: { name: 'generated', scopes: ['admin'] } });
  }

  if (!init.masterKey && init.previousMasterKeys?.trim()) {
    throw new MasterKeyError(`${PREVIOUS_MASTER_KEYS_ENV} is set but ${MASTER_KEY_ENV} is not: a rotation needs the new master key in ${MASTER_KEY_ENV}`);
  }
  const masterKey = init.masterKey ? MasterKeyring.parse(init.masterKey, init.previousMasterKeys) : undefined;
  const registry = new ProviderRegistry(defaultProviders(), {
    ...bootstrap?.provider_base_urls,
    ...options['provider-base-urls'],
  });
  const hostGuard = new HostGuard({ trusted: options['trusted-hosts'], ...(init.resolveHost ? { resolve: init.resolveHost } : {}) });
  // An operator's base URL is reached like any other: a private one needs GATEWAY_TRUSTED_HOSTS.
  // Said at start (for IP literals and localhost names) rather than on every request.
  for (const [id, url] of registry.baseUrlOverrides()) {
    try {
      hostGuard.checkUrl(url, `provider_base_urls.${id}`);
    } catch (e) {
      throw new BootstrapError(`${(e as Error).message} (GATEWAY_TRUSTED_HOSTS, --trusted-hosts)`);
    }
  }
  const agentOptions: Agent.Options = {
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: options['upstream-timeout'],
    bodyTimeout: options['stream-idle-timeout'],
    connections: 512,
    pipelining: 1,
  };
  // The one way out (src/security/egress.ts): provider calls, token endpoints and the checks' HTTP
  // client share one dispatcher whose connector applies the host guard to every connection.
  const egress = createEgress(hostGuard, agentOptions, 'cloud_c_service_account_json.token_uri');

  const saved = init.savedConfigs ?? loadPipelines(options.pipelines, options.pipelines !== 'pipelines');
  const declaredVirtualKeys = bootstrap?.virtual_keys ?? {};
  // Saved configs are checked at start against the bootstrap file's virtual keys (keys made through
  // the API are in the store, loaded by listen()) and with no stored guardrail loaded yet: a config
  // may name any; a request using one that does not exist gets 404 or 400 then.
  const bootDeps: PlanDeps = { virtualKeys: new MemoryVirtualKeyStore(declaredVirtualKeys), registry, hostGuard, guardrails: () => ({ checks: [] }) };
  const needKeys: string[] = [];
  for (const [id, cfg] of saved) {
    try {
      buildPlan(cfg, bootDeps);
    } catch (e) {
      // A saved config may name virtual keys this deployment has not declared (the shipped examples
      // do): it is valid, and requests using it get 404 virtual_key_not_found. Anything else stops.
      if (e instanceof GatewayError && e.code === 'virtual_key_not_found') needKeys.push(id);
      else throw new PipelineError(describeGatewayError(`saved config ${id}`, e));
    }
  }
  if (needKeys.length > 0) {
    logger.warn({ msg: 'saved configs name virtual keys the bootstrap file does not declare; requests using them get 404 unless such a key is made through /v1/virtual-keys', configs: needKeys });
  }

  const telemetry = new PrometheusTelemetry();
  const stores = createStores({
    redisUrl: options.redis,
    cacheMaxBytes: options['cache-max-bytes'],
    requestLogSize: options['request-log-size'],
    declaredKeys: apiKeys,
    declaredVirtualKeys,
    masterKey,
    observer: {
      operation: (store, op, seconds, ok) => telemetry.storeOperation(store, op, seconds, ok),
      availability: (store, up) => logger[up ? 'info' : 'warn']({ msg: up ? 'store available' : 'store unavailable; serving degraded', store }),
    },
    logger: {
      info: (o) => logger.info(o),
      warn: (o) => logger.warn(o),
      error: (o) => logger.error(o),
    },
    onRemoteTransition: (id, t) => logger.info({ msg: 'circuit changed on another instance', circuit: id, from: t.from, to: t.to }),
  });
  const catalog: Catalog = { apiKeys: stores.apiKeys, virtualKeys: stores.virtualKeys, savedConfigs: new MemoryVersionedStore(saved) };
  const planDeps: PlanDeps = {
    // A key made in a workspace (or an organisation) serves only that workspace's requests: the
    // resolver looks ids up in the requesting key's scope.
    virtualKeys: catalog.virtualKeys,
    registry,
    hostGuard,
    guardrails: guardrailLookup(stores.guardrails),
    guardrailsVersion: () => stores.guardrails.generation(),
  };
  // What guardrail and hook checks use: the host-guarded HTTP client (webhook, log, JWKS, URL
  // lookups), the JWKS cache and the clock.
  const checkDeps = createCheckDeps(hostGuard, { allowUrlLookups: options['check-url-lookups'], dispatcher: egress.dispatcher });
  const hookDeps: HookStageDeps = {
    checks: checkDeps,
    telemetry,
    // Async hooks finish after the answer (and its log line): their results get a line of their own.
    onAsync: (traceId, results, phase) =>
      logger.info({
        msg: 'async hooks',
        trace_id: traceId,
        hooks: phase === 'request' ? hooksSummary(results, []) : hooksSummary([], results),
      }),
  };
  let pipelineDeps: PipelineDeps | undefined;
  const embeddings = bootstrap?.semantic_cache?.embeddings;
  let embed: (text: string) => Promise<Float32Array> = (text) => Promise.resolve(embedLocal(text));
  if (embeddings) {
    const node = buildPlan({ virtual_key: embeddings.virtual_key } as Config, planDeps, 'semantic_cache.embeddings');
    if (node.kind !== 'target') throw new PipelineError('semantic_cache.embeddings must name one target');
    embed = providerEmbedder(node, embeddings.model, () => pipelineDeps!);
  }
  const now = init.now ?? (() => performance.timeOrigin + performance.now());
  const policies = new PoliciesService(stores.policies, stores.usage, now);
  const prompts = new PromptsService(stores.prompts);
  const prices = new PriceTable(bootstrap?.prices, (name) => {
    const p = registry.find(name);
    if (!p) throw new BootstrapError(`bootstrap is invalid:\n  prices.${name}: unknown provider; known: ${registry.ids().join(', ')}`);
    return p.descriptor.id;
  });
  const webhook = options['usage-limit-alert-webhook'];
  if (webhook !== undefined) {
    try {
      hostGuard.checkUrl(webhook, '--usage-limit-alert-webhook (GATEWAY_USAGE_LIMIT_ALERT_WEBHOOK)');
    } catch (e) {
      throw new Error((e as Error).message);
    }
  }
  // Usage limits and the ledger: every answer is priced (x-gateway-cost, the log's cost); requests
  // that match an active policy reserve their estimate and settle with the reported usage.
  const usageLimits = new UsageLimits({
    policies: stores.policies,
    counters: stores.usage,
    prices,
    telemetry,
    logger: { warn: (o) => logger.warn(o) },
    now,
    onStoreError: options['usage-limits-on-store-error'],
    ...(webhook !== undefined ? { webhook: { url: webhook, http: checkDeps.http, timeoutMs: ALERT_WEBHOOK_TIMEOUT_MS } } : {}),
  });
  let draining = false;
  // Open client connections (added and removed once per connection, not per request): at the
  // shutdown deadline the exchange each one is answering is ended with a word.
  const sockets = new Set<Socket>();
  const handler = createHandler({
    resolver: new ConfigResolver(planDeps, catalog.savedConfigs),
    pipeline: (pipelineDeps = {
      registry,
      dispatcher: egress.dispatcher,
      telemetry,
      breakers: stores.breakers,
      cache: {
        store: stores.cache,
        vectors: stores.vectors,
        embed,
        available: stores.available,
        defaultTtlSeconds: options['cache-ttl'],
        defaultThreshold: options['semantic-threshold'],
        inflight: new Map(),
      },
      streamIdleTimeoutMs: options['stream-idle-timeout'],
      upstreamLimits: { maxBody: options['upstream-max-body'], maxEvent: options['upstream-max-event'] },
      requestBudgetMs: options['request-budget'],
      now,
      random: init.random ?? Math.random,
      fetch: egress.fetch,
      hooks: hookDeps,
    }),
    stages: { usageLimit: usageLimit({ limits: usageLimits }), ledger: usageLimits },
    metrics: telemetry.registry,
    apiKeys: catalog.apiKeys,
    guardrails: new GuardrailsService(stores.guardrails, init.validateChecks ?? checksValidator(resolveCheck)),
    prompts,
    // Prompts are looked up in the scope of the request's key (its workspace; proxying ignores admin).
    promptRenderer: new PromptRenderer((idOrSlug, versionId, scope) => stores.prompts.lookup(idOrSlug, versionId, scope), callerScope, {
      maxSteps: options['template-max-steps'],
      maxOutput: options['template-max-output'],
    }),
    policies,
    adminKeys: new ApiKeysService(stores.apiKeys),
    virtualKeys: new VirtualKeysService(stores.virtualKeys, virtualKeyChecker(registry, hostGuard), masterKey !== undefined, { bootstrapFile: options.bootstrap }),
    requestLogs: stores.requestLogs,
    logger,
    bodyLimitBytes: options['body-limit'],
    isDraining: () => draining,
  }, init.routes);
  // Client connection limits. requestTimeout (the whole request, headers and body) and headersTimeout
  // stop counting once the request has been received, so a long streamed response is not limited;
  // headersTimeout also cuts a connection that sends nothing. keepAliveTimeout: idle between requests.
  const server = createServer(
    {
      headersTimeout: options['client-headers-timeout'],
      requestTimeout: options['client-body-timeout'],
      keepAliveTimeout: options['keep-alive-timeout'],
      connectionsCheckingInterval: connectionsCheckingIntervalMs(options['client-headers-timeout'], options['client-body-timeout']),
    },
    handler,
  );
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  /**
   * Entries of the bootstrap file stored at every start (idempotent). When Redis is unreachable:
   * an error, or with --redis-optional a warning and nothing declared in this run.
   */
  async function declareFromFile<T>(what: string, declare: () => Promise<T>): Promise<T | undefined> {
    try {
      return await declare();
    } catch (e) {
      if (!options['redis-optional']) throw new Error(`bootstrap ${what} could not be stored: ${(e as Error).message}`);
      logger.warn({ msg: `bootstrap ${what} could not be stored (Redis unreachable); they are not declared in this run`, error: (e as Error).message });
      return undefined;
    }
  }

  /** The bootstrap file's usage_limits into the policy store. */
  async function declarePolicies(): Promise<void> {
    const entries = bootstrap?.usage_limits ?? [];
    if (entries.length === 0 || (await declareFromFile('usage_limits', () => policies.declare(entries))) === undefined) return;
    logger.info({ msg: 'usage-limit policies declared', declared: entries.length, counters: stores.usage.kind });
  }

  /** The bootstrap file's prompts into the prompt store (a changed entry adds a version). */
  async function declarePrompts(): Promise<void> {
    const entries = bootstrap?.prompts ?? [];
    const declared = entries.length === 0 ? undefined : await declareFromFile('prompts', () => prompts.declare(entries));
    if (!declared) return;
    logger.info({
      msg: 'bootstrap prompts declared',
      prompts: declared.map(({ record: r, outcome }) => ({ id: r.id, slug: r.slug, version_id: r.version_id, workspace_id: r.workspace_id, organisation_id: r.organisation_id, outcome })),
    });
  }

  return {
    server,
    stores,
    catalog,
    logger,
    generatedKey,
    async listen(port = options.port, host = options.host) {
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
      await declarePolicies();
      await declarePrompts();
      return new Promise<AddressInfo>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    async shutdown(timeoutMs = options['shutdown-timeout'], drainDelayMs = 0) {
      draining = true;
      const start = performance.now();
      // Still accepting: a load balancer polling /ready sees 503 and stops sending here. Responses
      // say connection: close, so kept-alive connections end after their next answer.
      if (drainDelayMs > 0) await sleep(Math.min(drainDelayMs, timeoutMs));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Connections that finish their last response become idle: close them as they do.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'deadline'>((resolve) => {
        timer = setTimeout(() => resolve('deadline'), Math.max(0, timeoutMs - (performance.now() - start)));
      });
      const outcome = await Promise.race([closed.then(() => 'drained' as const), deadline]);
      clearTimeout(timer);
      if (outcome === 'deadline') {
        logger.warn({ msg: 'shutdown deadline reached; closing remaining connections', timeout_ms: timeoutMs, connections: sockets.size });
        // Every unfinished answer ends with a word (503 JSON, or an SSE error event), its upstream call
        // aborted; give the bytes up to 1 s to reach the sockets, then close every connection.
        let grace: NodeJS.Timeout | undefined;
        await Promise.race([
          endInFlight(sockets, new GatewayError('shutting_down')),
          new Promise((resolve) => (grace = setTimeout(resolve, 1000))),
        ]);
        clearTimeout(grace);
        server.closeAllConnections();
        await closed;
      }
      clearInterval(sweep);
      usageLimits.stop();
      await Promise.all([egress.close(), stores.close(), checkDeps.close()]);
    },
  };
}
