import type { Server } from 'node:http';

/**
 * Listen, print `listening <port>` on stdout once connections are accepted (what the orchestrator
 * waits for), and on SIGTERM/SIGINT close every connection and exit after `beforeExit` (at most 1 s).
 */
export function serveUntilSignalled(server: Server, port: number, host: string, beforeExit: () => Promise<unknown> = () => Promise.resolve()): void {
  server.listen(port, host, () => {
    const addr = server.address();
    process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : port}\n`);
  });
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    void beforeExit().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 1000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
