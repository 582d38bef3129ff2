import { readFileSync } from 'node:fs';
import { BootstrapError } from '../config/bootstrap.js';
import type { ServerOptions } from '../config/options.js';
import type { OtlpPost } from '../metrics/otlp-exporter.js';
import type { RequestSpan, Tracing } from '../metrics/tracing.js';
import { createEgressFetch } from '../security/egress.js';
import type { Logger } from '../util/log.js';
import type { Providers } from './providers.js';

/** How long one export may take. */
const EXPORT_TIMEOUT_MS = 10_000;
/** A failing collector is said in the log at most this often. */
const WARN_EVERY_MS = 60_000;

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Tracing, and the step that loads its implementation (run before the server listens). */
export interface TracingParts {
  tracing: Tracing;
  start(): Promise<void>;
}

/** Not started yet (a handler used without `listen`): spans go nowhere. */
const NOT_STARTED: RequestSpan = {
  attempt: () => ({ note: () => undefined, end: () => undefined }),
  end: () => undefined,
};

/**
 * Request tracing when `--otlp-endpoint` is set, else undefined (off: nothing is made, and the
 * OpenTelemetry packages are not even loaded: `start` imports them). The spans go out through the
 * one egress (src/security/egress.ts), as every URL an operator sets does: the endpoint is checked by
 * the host guard at start (a private one needs --trusted-hosts), no redirect is followed, and the
 * connector checks each address dialled.
 */
export function buildTracing(options: ServerOptions, providers: Providers, logger: Logger): TracingParts | undefined {
  const url = options['otlp-endpoint'];
  if (url === undefined) return undefined;
  try {
    providers.hostGuard.checkUrl(url, 'otlp-endpoint');
  } catch (e) {
    throw new BootstrapError(`${(e as Error).message} (GATEWAY_TRUSTED_HOSTS, --trusted-hosts)`);
  }
  const egressFetch = createEgressFetch(providers.egress.dispatcher, providers.hostGuard, 'otlp-endpoint');
  const post: OtlpPost = async (body, signal) => {
    const res = await egressFetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, signal });
    await res.arrayBuffer().catch(() => undefined);
    return res.status;
  };
  let warnedAt = -Infinity;
  const onFailure = (reason: string): void => {
    const t = Date.now();
    if (t - warnedAt < WARN_EVERY_MS) return;
    warnedAt = t;
    // The origin only: a URL's path or query may carry a collector's token.
    logger.warn({ msg: 'spans could not be exported', otlp_endpoint: new URL(url).origin, reason });
  };
  let impl: Tracing | undefined;
  const tracing: Tracing = {
    startRequest: (traceId, startMs) => (impl ? impl.startRequest(traceId, startMs) : NOT_STARTED),
    shutdown: () => impl?.shutdown() ?? Promise.resolve(),
  };
  const start = async (): Promise<void> => {
    if (impl) return;
    const [{ OtelTracing }, { OtlpJsonExporter }] = await Promise.all([import('../metrics/otel-tracing.js'), import('../metrics/otlp-exporter.js')]);
    const exporter = new OtlpJsonExporter({ post, timeoutMs: EXPORT_TIMEOUT_MS, onFailure });
    impl = new OtelTracing({ exporter, serviceVersion: packageVersion(), exportDelayMs: options['otlp-export-delay'] });
  };
  return { tracing, start };
}
