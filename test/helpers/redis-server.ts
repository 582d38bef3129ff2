/**
 * A real, throw-away `redis-server` on a spare 127.0.0.1 port, for fault tests: stop it, start it
 * again on the same port. No persistence unless asked (`stop({ save: true })` writes an RDB file in
 * a temporary directory that the next start loads). Every server is killed when the process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { killOnExit } from './children.js';
import { freePort } from './net.js';

/** Re-exported: tests import it from here too. */
export { freePort } from './net.js';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Stop the server. `save`: write its data first (SHUTDOWN SAVE), so the next start loads it. */
  stop(opts?: { save?: boolean }): Promise<void>;
  /** Start it again on the same port (after stop). */
  restart(): Promise<void>;
  /** Stop for good and remove its directory. */
  close(): Promise<void>;
  running(): boolean;
}

/** Send one inline command and read the first reply line (or reject). */
function command(port: number, cmd: string, timeoutMs = 1000): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = '';
    const done = (err: Error | undefined, v?: string) => {
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(v!);
    };
    const timer = setTimeout(() => done(new Error(`no reply to ${cmd} within ${timeoutMs} ms`)), timeoutMs);
    sock.on('connect', () => sock.write(cmd + '\r\n'));
    sock.on('data', (d) => {
      buf += d.toString();
      const i = buf.indexOf('\r\n');
      if (i >= 0) done(undefined, buf.slice(0, i));
    });
    sock.on('error', (e) => done(e));
    sock.on('close', () => done(new Error(`connection closed before a reply to ${cmd}`)));
  });
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function startRedisServer(opts: { port?: number } = {}): Promise<RedisServer> {
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-redis-'));
  let proc: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stderr = '';

  async function start(): Promise<void> {
    const p = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--dbfilename', 'dump.rdb'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    p.stderr!.on('data', (d) => (stderr += d.toString()));
    killOnExit(p);
    proc = p;
    exited = new Promise((resolve) =>
      p.once('exit', () => {
        if (proc === p) proc = undefined;
        resolve();
      }),
    );
    try {
      await waitFor(async () => {
        if (!proc) throw new Error(`redis-server exited: ${stderr}`);
        return (await command(port, 'PING', 500)) === '+PONG';
      }, 5000, `redis-server on port ${port} to answer PING`);
    } catch (e) {
      p.kill('SIGKILL');
      throw e;
    }
  }

  async function stop({ save = false }: { save?: boolean } = {}): Promise<void> {
    const p = proc;
    if (!p) return;
    // SHUTDOWN closes the connection without a reply when it succeeds
    await command(port, save ? 'SHUTDOWN SAVE' : 'SHUTDOWN NOSAVE', 2000).catch(() => undefined);
    const killer = setTimeout(() => p.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(killer);
  }

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    async restart() {
      if (proc) throw new Error('redis-server is still running');
      await start();
    },
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    running: () => proc !== undefined,
  };
}
