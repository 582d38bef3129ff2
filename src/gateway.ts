import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Bootstrap } from './config/bootstrap.js';
import type { ServerOptions } from './config/options.js';
import type { Config } from './config/schema.js';
import type { HotRoute } from './http/router.js';
import type { ValidateChecks } from './management/guardrails.js';
import { PrometheusTelemetry } from './metrics/prometheus.js';
import type { ResolveHost } from './security/host-guard.js';
import type { Catalog } from './state/catalog.js';
import type { Stores } from './state/stores.js';
import { createLogger, type Logger } from './util/log.js';
import type { Basics } from './compose/basics.js';
import { declareFromBootstrap } from './compose/declare.js';
import { buildEdge } from './compose/edge.js';
import { buildPipeline } from './compose/pipeline.js';
import { buildProviders } from './compose/providers.js';
import { createGatewayServer } from './compose/server.js';
import { buildState, startState } from './compose/state.js';
import { buildTracing } from './compose/tracing.js';

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
   * Drain and stop (src/compose/server.ts): at once /ready answers 503 and responses say
   * `connection: close`; for `drainDelayMs` (default 0; `sluice serve` passes --drain-delay on
   * SIGTERM) new connections are still accepted; in-flight requests may finish until `timeoutMs`
   * after the call, then are ended with 503 shutting_down. Then every store and client is closed.
   */
  shutdown(timeoutMs?: number, drainDelayMs?: number): Promise<void>;
}

/**
 * The composition root: providers (registry, host guard, egress), state (keys, saved configs,
 * stores), the pipeline's deps and stages, the edge (handler, management services) and the server.
 */
export function createGateway(init: GatewayInit): Gateway {
  const { options } = init;
  const logger = init.logger ?? createLogger(options['log-level']);
  const now = init.now ?? (() => performance.timeOrigin + performance.now());
  const b: Basics = { options, bootstrap: init.bootstrap, logger, telemetry: new PrometheusTelemetry(), now };
  const providers = buildProviders(options, init.bootstrap, init.resolveHost);
  const state = buildState(b, init, providers);
  const pipeline = buildPipeline(b, init.random ?? Math.random, providers, state);
  const tracing = buildTracing(options, providers, logger);
  const http = createGatewayServer(options, logger);
  const edge = buildEdge(b, init, { providers, state, pipeline, tracing: tracing?.tracing }, http.isDraining);
  http.handle(edge.handler);
  return {
    server: http.server,
    stores: state.stores,
    catalog: state.catalog,
    logger,
    generatedKey: state.generatedKey,
    async listen(port = options.port, host = options.host) {
      await startState(state, options, logger);
      await tracing?.start();
      await declareFromBootstrap(b, edge, state);
      return http.listen(port, host);
    },
    async shutdown(timeoutMs = options['shutdown-timeout'], drainDelayMs = 0) {
      await http.drain(timeoutMs, drainDelayMs);
      // The last spans go out before the egress closes.
      await tracing?.tracing.shutdown().catch(() => undefined);
      await Promise.all([pipeline.close(), providers.egress.close(), state.stores.close()]);
    },
  };
}
