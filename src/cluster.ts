import cluster from 'node:cluster';
import { generateApiKey } from './security/api-keys.js';

export interface PrimaryOptions {
  workers: number;
  /** True when some gateway key is configured; else one is generated here and shared by every worker. */
  hasKeys: boolean;
  shutdownTimeoutMs: number;
  log: (line: Record<string, unknown>) => void;
}

/**
 * `sluice serve --workers N`: the primary forks N gateway processes that share the listening port
 * (node:cluster), restarts one that dies, and on SIGTERM/SIGINT passes the signal on and exits when
 * every worker has drained. Worker state is per process: use Redis to share cache and breakers.
 */
export function runPrimary(o: PrimaryOptions): void {
  const env: Record<string, string> = {};
  if (!o.hasKeys) {
    const key = generateApiKey();
    env.GATEWAY_API_KEYS = key;
    process.stderr.write(
      `\nNo gateway key configured (GATEWAY_API_KEYS or --bootstrap). Generated one for this run:\n\n  x-gateway-api-key: ${key}\n\n`,
    );
  }
  let stopping = false;
  let exitCode = 0;
  const fork = (): void => {
    cluster.fork(env);
  };
  for (let i = 0; i < o.workers; i++) fork();
  // The first workers' start-up decides: one that exits before it listens (bad options, Redis not
  // reachable, port taken) would fail the same way again, so stop, as a single process does, rather
  // than restart it forever. A worker that dies later is replaced.
  const initial = new Set(Object.values(cluster.workers ?? {}).map((w) => w!.id));
  const listened = new Set<number>();
  cluster.on('listening', (worker) => listened.add(worker.id));
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
      return;
    }
    if (initial.has(worker.id) && !listened.has(worker.id)) {
      o.log({ msg: 'worker failed to start; stopping', pid: worker.process.pid, code, signal });
      exitCode = code || 1;
      stop('SIGTERM');
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
      return;
    }
    o.log({ msg: 'worker exited; starting another', pid: worker.process.pid, code, signal });
    fork();
  });
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1);
    stopping = true;
    o.log({ msg: 'shutting down workers', signal });
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal);
    setTimeout(() => process.exit(exitCode || 1), o.shutdownTimeoutMs + 5000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

export const isPrimary = (): boolean => cluster.isPrimary;
