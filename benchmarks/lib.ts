/**
 * What the benchmark is made of: pinned child processes that are always stopped, a process's CPU
 * time from /proc, one wrk run, medians and spreads, text tables. Everything talks to 127.0.0.1.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(BENCH_DIR, '..');

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Half the range of xs over its median (0.03 = ±3%): how far the repetitions disagree. */
export function spread(xs: readonly number[]): number {
  return xs.length < 2 ? 0 : (Math.max(...xs) - Math.min(...xs)) / 2 / median(xs);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let clkTck: number | undefined;
/** utime + stime of a process (all its threads) in seconds, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  clkTck ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Field 2 (the command) is in parentheses and may hold spaces: count from the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / clkTck;
}

// ---------------------------------------------------------------------------------------------
// Child processes: pinned, waited for, stopped on exit, error or Ctrl-C

const children = new Set<Proc>();
/** wrk runs under way. */
const loads = new Set<ChildProcess>();
const exitHooks: (() => void)[] = [];

export interface ProcOptions {
  name: string;
  /** Core list for `taskset -c`; omitted: not pinned. */
  cpu?: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Resolves once the process accepts connections on this port. */
  port: number;
  /** stdout goes to this file (the gateway's request log); otherwise it is discarded. */
  stdoutFile?: string;
}

export class Proc {
  readonly child: ChildProcess;
  readonly commandLine: string;
  readonly exited: Promise<void>;
  private stderr = '';
  private done = false;

  constructor(readonly opts: ProcOptions) {
    const argv = opts.cpu === undefined ? [opts.command, ...opts.args] : ['taskset', '-c', opts.cpu, opts.command, ...opts.args];
    const env = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`);
    this.commandLine = [...env, ...argv].join(' ') + (opts.stdoutFile ? ` >${opts.stdoutFile}` : '');
    // taskset execs the command, so the child's pid is the pinned process itself.
    this.child = spawn(argv[0]!, argv.slice(1), {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', opts.stdoutFile ? openSync(opts.stdoutFile, 'a') : 'ignore', 'pipe'],
    });
    children.add(this);
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr = (this.stderr + s).slice(-4000)));
    this.exited = new Promise((resolve) => {
      const end = (): void => {
        this.done = true;
        children.delete(this);
        resolve();
      };
      this.child.once('exit', end);
      this.child.once('error', (e) => {
        this.stderr += `\n${e.message}`;
        end();
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get port(): number {
    return this.opts.port;
  }

  async ready(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await canConnect(this.port))) {
      if (this.done) throw new Error(`${this.opts.name} exited before listening:\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`${this.opts.name}: port ${this.port} not listening in time\n${this.stderr}`);
      await sleep(50);
    }
  }

  /** SIGTERM, SIGKILL after graceMs; resolves once it has exited. */
  async stop(graceMs = 3000): Promise<void> {
    if (this.done) return;
    this.child.kill('SIGTERM');
    const t = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(t);
  }
}

/** Spawns a process and resolves once it listens; stopped when this process ends. */
export async function startProc(opts: ProcOptions): Promise<Proc> {
  const p = new Proc(opts);
  try {
    await p.ready();
  } catch (e) {
    await p.stop(500);
    throw e;
  }
  return p;
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => c.stop()));
}

/** `fn` runs once when this process exits, however it exits (after the children are killed). */
export function onExit(fn: () => void): void {
  exitHooks.push(fn);
}

let installed = false;
/** No child outlives the run: on exit, on SIGINT/SIGTERM/SIGHUP, and on an uncaught error. */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.on('exit', () => {
    for (const c of [...[...children].map((p) => p.child), ...loads]) c.kill('SIGKILL');
    for (const fn of exitHooks.splice(0)) fn();
  });
  const fail = (why: string, code: number): void => {
    process.stderr.write(`\n${why}: stopping the benchmark's processes\n`);
    void stopAll().finally(() => process.exit(code));
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => fail(sig, 130));
  process.on('uncaughtException', (e) => fail(e.stack ?? e.message, 1));
  process.on('unhandledRejection', (e) => fail(String(e instanceof Error ? e.stack : e), 1));
}

export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Pins this process and its threads (the orchestrator) to a core list. */
export function pinSelf(cpu: string): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpu, String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// wrk

export interface WrkRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface WrkResult {
  requests: number;
  durationS: number;
  /** Socket errors, timeouts and answers other than 2xx/3xx. */
  errors: number;
  p50Ms: number;
  p99Ms: number;
}

/** One closed-loop wrk run (benchmarks/wrk.lua: the POST below, a `WRK_JSON` line at the end). */
export async function runWrk(req: WrkRequest, o: { connections: number; durationS: number; cpu?: string }): Promise<WrkResult> {
  const args = [`-t1`, `-c${o.connections}`, `-d${o.durationS}s`, '--timeout', '5s', '-s', path.join(BENCH_DIR, 'wrk.lua'), req.url, '--'];
  args.push(...Object.entries(req.headers).map(([k, v]) => `${k}: ${v}`));
  const argv = o.cpu === undefined ? ['wrk', ...args] : ['taskset', '-c', o.cpu, 'wrk', ...args];
  const child = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, WRK_BODY: req.body }, stdio: ['ignore', 'pipe', 'pipe'] });
  loads.add(child);
  child.once('exit', () => loads.delete(child));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (out += s));
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('close', resolve));
  const m = /^WRK_JSON (\{.*\})$/m.exec(out);
  if (!m) throw new Error(`wrk (exit ${code}) printed no WRK_JSON line:\n${out}`);
  const j = JSON.parse(m[1]!) as { requests: number; duration_us: number; errors: number; p50_us: number; p99_us: number };
  return { requests: j.requests, durationS: j.duration_us / 1e6, errors: j.errors, p50Ms: j.p50_us / 1000, p99Ms: j.p99_us / 1000 };
}

// ---------------------------------------------------------------------------------------------
// Output

/** A fixed-width text table (first column left-aligned). */
export function table(header: string[], rows: string[][]): string {
  const cells = [header, ...rows];
  const w = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ');
  return [line(header), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}

export function machineInfo(): { nproc: number; cpuModel: string; node: string; platform: string; wrk: string | null; loadavgAtStart: number[] } {
  let cpuinfo = '';
  try {
    cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    /* not Linux */
  }
  let wrk: string | null = null;
  try {
    execFileSync('wrk', ['--version'], { stdio: 'pipe' });
  } catch (e) {
    // wrk --version prints its banner and exits 1.
    wrk = String((e as { stdout?: Buffer }).stdout ?? '').split('\n')[0]!.replace(/\s*Copyright.*$/, '').trim() || null;
  }
  return {
    nproc: os.cpus().length,
    cpuModel: /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    wrk,
    loadavgAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}
