import { Writable } from 'node:stream';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { readOptions } from '../../src/config/options.js';
import { parseBootstrap, type Bootstrap } from '../../src/config/bootstrap.js';
import type { Config } from '../../src/config/schema.js';
import { createLogger } from '../../src/util/log.js';
import type { HotRoute } from '../../src/http/router.js';
import type { ValidateChecks } from '../../src/management/guardrails.js';
import type { ResolveHost } from '../../src/security/host-guard.js';

export const TEST_KEY = 'sk-test-gateway-key-0123456789';

export interface TestGateway {
  /** e.g. http://127.0.0.1:40123 */
  url: string;
  key: string;
  gateway: Gateway;
  /** Every log line written so far, parsed. */
  logs: Record<string, any>[];
  /** Raw log text (to assert that no secret appears anywhere). */
  logText(): string;
  /** Headers for a request through the gateway (gateway key + JSON content type). */
  headers(extra?: Record<string, string>): Record<string, string>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** CLI-style options, e.g. { 'trusted-hosts': '127.0.0.1', 'body-limit': '1kb' }. */
  options?: Record<string, string>;
  /** Bootstrap YAML text (parsed with process.env unless env is given). */
  bootstrapYaml?: string;
  bootstrap?: Bootstrap;
  env?: NodeJS.ProcessEnv;
  savedConfigs?: Map<string, Config>;
  /** The gateway's clock in ms (breaker cooldowns, retry budget); default: the real one. */
  now?: () => number;
  /** The gateway's random source (loadbalance picks, retry jitter); default: Math.random. */
  random?: () => number;
  /** More hot routes beside the proxied endpoints (path patterns with :params). */
  routes?: readonly HotRoute[];
  /** Validates stored guardrails' checks (POST/PUT /v1/guardrails); default: the gateway's. */
  validateChecks?: ValidateChecks;
  /** SLUICE_MASTER_KEY's text (seals virtual keys' secrets); default: none. */
  masterKey?: string;
  /** SLUICE_MASTER_KEY_PREVIOUS's text (keys read during a rotation); default: none. */
  previousMasterKeys?: string;
  /** How the host guard resolves names (map made-up names to loopback); default: dns.lookup. */
  resolveHost?: ResolveHost;
}

/** An in-process gateway on 127.0.0.1:0 with a captured logger. Trusts 127.0.0.1 unless told otherwise. */
export async function startGateway(opts: StartOptions = {}): Promise<TestGateway> {
  const options = readOptions(
    { 'api-keys': TEST_KEY, 'trusted-hosts': '127.0.0.1', 'log-level': 'info', port: '0', ...opts.options },
    {},
  );
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const logger = createLogger(options['log-level'], sink);
  const bootstrap = opts.bootstrap ?? (opts.bootstrapYaml ? parseBootstrap(opts.bootstrapYaml, opts.env ?? process.env) : undefined);
  const gateway = createGateway({
    options,
    bootstrap,
    logger,
    savedConfigs: opts.savedConfigs ?? new Map(),
    now: opts.now,
    random: opts.random,
    routes: opts.routes,
    validateChecks: opts.validateChecks,
    masterKey: opts.masterKey,
    previousMasterKeys: opts.previousMasterKeys,
    resolveHost: opts.resolveHost,
  });
  const addr = await gateway.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${addr.port}`;
  return {
    url,
    key: TEST_KEY,
    gateway,
    get logs() {
      return lines.map((l) => JSON.parse(l) as Record<string, any>);
    },
    logText: () => lines.join('\n'),
    headers: (extra = {}) => ({ 'x-gateway-api-key': TEST_KEY, 'content-type': 'application/json', ...extra }),
    close: () => gateway.shutdown(1000),
  };
}
