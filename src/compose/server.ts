import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ServerOptions } from '../config/options.js';
import { GatewayError } from '../errors/gateway-error.js';
import { endInFlight } from '../http/app.js';
import type { Logger } from '../util/log.js';

/**
 * How often Node's http server looks for connections over the header and request limits: a quarter
 * of the shorter limit, between 25 ms and 1 s. Node's default (30 s) would let a 20 s limit run to
 * 50 s; the check walks only the connections still receiving a request.
 */
export function connectionsCheckingIntervalMs(headersMs: number, requestMs: number): number {
  return Math.max(25, Math.min(1000, Math.floor(Math.min(headersMs, requestMs) / 4)));
}

/** The gateway's HTTP server: its connections, and how it stops. */
export interface GatewayServer {
  readonly server: Server;
  /** True once drain has begun: /ready answers 503 and responses say `connection: close`. */
  isDraining(): boolean;
  /** Serves `handler` on every request (called once, when the edge is built). */
  handle(handler: RequestListener): void;
  listen(port: number, host: string): Promise<AddressInfo>;
  /**
   * At once: isDraining() turns true. For `drainDelayMs` new connections are still accepted (a load
   * balancer polling /ready sees 503 and stops sending); then the listener closes and in-flight
   * requests may finish until `timeoutMs` after the call. Those still running then are ended with 503
   * shutting_down (an `event: error` frame on a started stream) and every connection is closed.
   */
  drain(timeoutMs: number, drainDelayMs: number): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An HTTP server with the client connection limits. requestTimeout (the whole request, headers and
 * body) and headersTimeout stop counting once the request has been received, so a long streamed
 * response is not limited; headersTimeout also cuts a connection that sends nothing.
 * keepAliveTimeout: idle between requests.
 */
export function createGatewayServer(options: ServerOptions, logger: Logger): GatewayServer {
  const server = createServer({
    headersTimeout: options['client-headers-timeout'],
    requestTimeout: options['client-body-timeout'],
    keepAliveTimeout: options['keep-alive-timeout'],
    connectionsCheckingInterval: connectionsCheckingIntervalMs(options['client-headers-timeout'], options['client-body-timeout']),
  });
  // Open client connections (added and removed once per connection, not per request): at the
  // shutdown deadline the exchange each one is answering is ended with a word.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  let draining = false;
  return {
    server,
    isDraining: () => draining,
    handle: (handler) => void server.on('request', handler),
    listen: (port, host) =>
      new Promise<AddressInfo>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    async drain(timeoutMs, drainDelayMs) {
      draining = true;
      await drainConnections(server, sockets, logger, timeoutMs, drainDelayMs);
    },
  };
}

async function drainConnections(server: Server, sockets: Set<Socket>, logger: Logger, timeoutMs: number, drainDelayMs: number): Promise<void> {
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
    await Promise.race([endInFlight(sockets, new GatewayError('shutting_down')), new Promise((resolve) => (grace = setTimeout(resolve, 1000)))]);
    clearTimeout(grace);
    server.closeAllConnections();
    await closed;
  }
  clearInterval(sweep);
}

/** What `stopOnSignals` stops. */
export interface Stoppable {
  logger: Logger;
  shutdown(timeoutMs?: number, drainDelayMs?: number): Promise<void>;
}

/**
 * SIGTERM and SIGINT drain `gateway` and exit the process (0 once stopped, 1 if shutdown failed). A
 * second signal while draining exits at once with 1. SIGTERM comes from an orchestrator: it keeps
 * accepting for `drainDelayMs` while /ready says 503, so the load balancer stops sending first.
 * SIGINT is Ctrl-C at a terminal: nobody to tell, no wait.
 */
export function stopOnSignals(gateway: Stoppable, drainDelayMs: number): void {
  let stopping = false;
  const stop = (signal: 'SIGTERM' | 'SIGINT'): void => {
    if (stopping) {
      gateway.logger.warn({ msg: 'second signal while draining; exiting now', signal });
      process.exit(1); // the logger writes what is waiting on exit
    }
    stopping = true;
    const delay = signal === 'SIGTERM' ? drainDelayMs : 0;
    gateway.logger.info({ msg: 'shutting down', signal, drain_delay_ms: delay });
    gateway.shutdown(undefined, delay).then(
      () => {
        gateway.logger.info({ msg: 'stopped' });
        process.exit(0); // the logger writes what is waiting on exit
      },
      (e: Error) => {
        gateway.logger.error({ msg: 'shutdown failed', err: e.message });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
