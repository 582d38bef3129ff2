/**
 * Real gateway processes for the scale and fault tests (not a test file itself):
 * `node --import tsx src/main.ts serve ...` with a clean environment, its JSON log parsed as it
 * arrives, and every wait bounded. Processes still running when the test process exits are killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { OPTION_TABLE } from '../../src/config/options.js';
import { killOnExit } from '../helpers/children.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const PROCESS_KEY = 'sk-scale-test-gateway-key-0123456789';

/** Environment variables that configure the server: stripped from the child's environment. */
const OPTION_ENV: string[] = OPTION_TABLE.map((o) => o.env);

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

let emptyDir: string | undefined;
/** An empty pipelines directory (no saved configs: no warnings about the shipped examples). */
function pipelinesDir(): string {
  if (!emptyDir) {
    emptyDir = mkdtempSync(join(tmpdir(), 'sluice-pipelines-'));
    const dir = emptyDir;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return emptyDir;
}

export class GatewayProcess {
  stdout = '';
  stderr = '';
  exit: Exit | undefined;
  readonly exited: Promise<Exit>;
  private listeners: (() => void)[] = [];
  /** Parsed log lines (stdout), kept as they arrive. */
  readonly logs: Record<string, any>[] = [];
  private partial = '';

  private constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      this.stdout += d;
      this.partial += d;
      const lines = this.partial.split('\n');
      this.partial = lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        try {
          this.logs.push(JSON.parse(line));
        } catch {
          // not a log line
        }
      }
      this.notify();
    });
    child.stderr!.on('data', (d: string) => {
      this.stderr += d;
      this.notify();
    });
    this.exited = new Promise((res) => {
      child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        this.notify();
        res(this.exit);
      });
    });
  }

  /** Start `sluice serve <args>` from the sources. */
  static serve(args: string[], env: Record<string, string> = {}): GatewayProcess {
    return GatewayProcess.node(['--import', 'tsx', join(ROOT, 'src', 'main.ts'), 'serve', '--pipelines', pipelinesDir(), ...args], {
      GATEWAY_API_KEYS: PROCESS_KEY,
      GATEWAY_TRUSTED_HOSTS: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
    });
  }

  /** Start `node <args>` in `cwd`, with the server's option variables stripped from the environment and `env` added. */
  static node(args: string[], env: Record<string, string> = {}, cwd = ROOT): GatewayProcess {
    return GatewayProcess.command(process.execPath, args, env, cwd);
  }

  /** Start `command <args>` (`npm start`, say) in `cwd`, with the environment as for node(). */
  static command(command: string, args: string[], env: Record<string, string> = {}, cwd = ROOT): GatewayProcess {
    const base: NodeJS.ProcessEnv = { ...process.env };
    for (const k of OPTION_ENV) delete base[k];
    const child = spawn(command, args, { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    killOnExit(child);
    return new GatewayProcess(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  private notify(): void {
    for (const l of this.listeners.slice()) l();
  }

  /** Resolves with the first value `check` returns that is not undefined; rejects on exit or timeout. */
  waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 10_000, rejectOnExit = true): Promise<T> {
    return new Promise((res, rej) => {
      const listener = (): void => {
        const v = check();
        if (v !== undefined) {
          cleanup();
          res(v);
        } else if (this.exit && rejectOnExit) {
          cleanup();
          rej(new Error(`process exited (${JSON.stringify(this.exit)}) before ${what}\n${this.output()}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        rej(new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${this.output()}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== listener);
      };
      this.listeners.push(listener);
      listener();
    });
  }

  /** The first n `"msg":"listening"` log lines. */
  listening(n = 1, timeoutMs = 15_000): Promise<Record<string, any>[]> {
    return this.waitFor(
      `${n} "listening" log line(s)`,
      () => {
        const lines = this.logs.filter((l) => l.msg === 'listening');
        return lines.length >= n ? lines.slice(0, n) : undefined;
      },
      timeoutMs,
    );
  }

  /** The first log line matching `pred` (waits for it). */
  logLine(what: string, pred: (l: Record<string, any>) => boolean, timeoutMs = 5000): Promise<Record<string, any>> {
    return this.waitFor(what, () => this.logs.find(pred), timeoutMs);
  }

  /** Wait for the process to exit, at most `timeoutMs`. */
  async waitExit(timeoutMs = 10_000): Promise<Exit> {
    return this.waitFor('the process to exit', () => this.exit, timeoutMs, false);
  }

  /**
   * SIGINT (a graceful stop without SIGTERM's --drain-delay), then SIGKILL if it has not exited within
   * `timeoutMs`. Resolves with the exit.
   */
  async stop(timeoutMs = 5000): Promise<Exit> {
    if (this.exit) return this.exit;
    this.child.kill('SIGINT');
    try {
      return await this.waitExit(timeoutMs);
    } catch {
      this.child.kill('SIGKILL');
      return this.exited;
    }
  }

  output(): string {
    return `stdout:\n${this.stdout}\nstderr:\n${this.stderr}`;
  }
}
