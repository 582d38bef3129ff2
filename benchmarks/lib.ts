/**
 * Reusable pieces for the gateway benchmarks (method in benchmarks/README.md):
 * pinned child processes that are always cleaned up, /proc readers for CPU time and RSS, load
 * generators (autocannon's programmatic API, wrk with a Lua script), sequential stream timing with
 * undici, and small statistics/formatting helpers.
 *
 * Everything here talks to 127.0.0.1 only.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(BENCH_DIR, '..');

// ---------------------------------------------------------------------------------------------
// Statistics

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]!;
}

export function round(x: number, digits = 2): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// /proc readers

let clkTck: number | undefined;
/** Kernel clock ticks per second (getconf CLK_TCK), used by /proc/<pid>/stat utime/stime. */
export function clockTicksPerSecond(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/** utime + stime of a process (all its threads), in clock ticks. */
export function readCpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU seconds (user + system) a process has used so far. */
export function readCpuSeconds(pid: number): number {
  return readCpuTicks(pid) / clockTicksPerSecond();
}

/** A field of /proc/<pid>/status in kB (VmRSS, VmHWM, ...); NaN when absent. */
export function readStatusKb(pid: number, field = 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
  return m ? Number(m[1]) : NaN;
}

export function readRssMb(pid: number): number {
  return readStatusKb(pid, 'VmRSS') / 1024;
}

/** Busy and total clock ticks of each core (cpu0, cpu1, ...) from /proc/stat. */
export function readCoreTicks(): { busy: number; total: number }[] {
  const out: { busy: number; total: number }[] = [];
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const m = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = m[2]!.trim().split(/\s+/).map(Number) as number[];
    const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
    out[Number(m[1])] = { busy, total: busy + idle! + (iowait ?? 0) };
  }
  return out;
}

/** CPU ticks of this process plus its reaped children (wrk runs end up here once they exit). */
export function readSelfAndChildrenTicks(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
}

export interface CoreMeasurement {
  /** Busy fraction (0..1) of each core over the measurement. */
  coreBusy: number[];
  /**
   * CPU used by processes other than the listed pids, this process and its finished children,
   * in cores (0..nproc): other work on the machine that disturbed the measurement.
   */
  foreignCores: number;
  wallS: number;
}

/**
 * Runs fn and returns its result with the CPU seconds each pid used meanwhile, how busy each core
 * was, and how much CPU other processes on the machine took (builds, test suites...), so a
 * disturbed run can be flagged.
 */
export async function withCpuAndCores<T>(
  pids: Record<string, number>,
  fn: () => Promise<T>,
): Promise<{ result: T; cpu: Record<string, number> } & CoreMeasurement> {
  const hz = clockTicksPerSecond();
  const c0 = readCoreTicks();
  const s0 = readSelfAndChildrenTicks();
  const w0 = performance.now();
  const { result, cpu } = await withCpu(pids, fn);
  const wallS = (performance.now() - w0) / 1000;
  const s1 = readSelfAndChildrenTicks();
  const c1 = readCoreTicks();
  let busyTicks = 0;
  const coreBusy = c1.map((c, i) => {
    const dt = c.total - (c0[i]?.total ?? 0);
    busyTicks += c.busy - (c0[i]?.busy ?? 0);
    return dt > 0 ? (c.busy - (c0[i]?.busy ?? 0)) / dt : NaN;
  });
  const ownS = Object.values(cpu).reduce((a, b) => a + b, 0) + (s1 - s0) / hz;
  const foreignCores = Math.max(0, (busyTicks / hz - ownS) / wallS);
  return { result, cpu, coreBusy, foreignCores, wallS };
}

/**
 * Waits until the machine is quiet: other processes (everything but `pids`, this process and its
 * children) use less than thresholdCores over a windowMs window, or maxWaitS has passed.
 * Returns the seconds waited and the last foreign load seen.
 */
export async function waitForQuiet(
  pids: number[],
  opts: { maxWaitS: number; thresholdCores?: number; windowMs?: number },
): Promise<{ waitedS: number; foreignCores: number }> {
  const t0 = performance.now();
  const keyed = Object.fromEntries(pids.map((p, i) => [String(i), p]));
  let foreign = NaN;
  for (;;) {
    const m = await withCpuAndCores(keyed, () => sleep(opts.windowMs ?? 500));
    foreign = m.foreignCores;
    const waitedS = (performance.now() - t0) / 1000;
    if (foreign < (opts.thresholdCores ?? 0.1) || waitedS >= opts.maxWaitS) return { waitedS, foreignCores: foreign };
  }
}

/**
 * Runs fn and returns its result with the CPU seconds each pid used meanwhile.
 * CPU per request = cpu[pid] / requests (CLK_TCK resolution: use runs of several seconds).
 */
export async function withCpu<T>(pids: Record<string, number>, fn: () => Promise<T>): Promise<{ result: T; cpu: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, readCpuTicks(pid)]));
  const result = await fn();
  const hz = clockTicksPerSecond();
  const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, (readCpuTicks(pid) - before[k]!) / hz]));
  return { result, cpu };
}

// ---------------------------------------------------------------------------------------------
// Child processes: pinned, waited for, always cleaned up

const children = new Set<ManagedProcess>();

export interface StartOptions {
  /** Short label for messages. */
  name: string;
  /** CPU core list for taskset -c (e.g. "0"); omit to not pin. */
  cpu?: string;
  command: string;
  args: string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Port the process listens on; start() resolves once it accepts TCP connections on 127.0.0.1. */
  port?: number;
  /** Or: resolve once stdout prints a line matching this (first capture group = port, if any). */
  readyLine?: RegExp;
  /** Discard stdout (e.g. request logs) instead of piping it. Default true unless readyLine is set. */
  discardStdout?: boolean;
  timeoutMs?: number;
}

export class ManagedProcess {
  readonly child: ChildProcess;
  readonly commandLine: string;
  port: number | undefined;
  private stderrTail = '';
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly exited: Promise<void>;

  constructor(readonly opts: StartOptions) {
    const argv = opts.cpu !== undefined ? ['taskset', '-c', opts.cpu, opts.command, ...opts.args] : [opts.command, ...opts.args];
    const envPart = Object.entries(opts.env ?? {})
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    this.commandLine = `${envPart ? `${envPart} ` : ''}${argv.join(' ')}`;
    const discard = opts.discardStdout ?? !opts.readyLine;
    // taskset execs the command, so child.pid is the pinned process itself.
    this.child = spawn(argv[0]!, argv.slice(1), {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', discard ? 'ignore' : 'pipe', 'pipe'],
    });
    this.port = opts.port;
    children.add(this);
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (s: string) => {
      this.stderrTail = (this.stderrTail + s).slice(-4000);
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        children.delete(this);
        resolve();
      });
      this.child.once('error', (e) => {
        this.stderrTail += `\nspawn error: ${e.message}`;
        this.exitInfo = { code: -1, signal: null };
        children.delete(this);
        resolve();
      });
    });
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`${this.opts.name}: not running`);
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  describeExit(): string {
    const e = this.exitInfo;
    return `${this.opts.name} exited (code ${e?.code}, signal ${e?.signal})${this.stderrTail ? `; stderr:\n${this.stderrTail}` : ''}`;
  }

  async waitReady(): Promise<void> {
    const deadline = Date.now() + (this.opts.timeoutMs ?? 20_000);
    if (this.opts.readyLine) {
      const re = this.opts.readyLine;
      await new Promise<void>((resolve, reject) => {
        let buf = '';
        const timer = setTimeout(() => reject(new Error(`${this.opts.name}: not ready in time. ${this.stderrTail}`)), deadline - Date.now());
        this.child.stdout!.setEncoding('utf8');
        this.child.stdout!.on('data', (s: string) => {
          buf += s;
          const m = re.exec(buf);
          if (m) {
            clearTimeout(timer);
            if (m[1] !== undefined) this.port = Number(m[1]);
            this.child.stdout!.resume(); // keep draining
            resolve();
          }
        });
        void this.exited.then(() => {
          clearTimeout(timer);
          reject(new Error(this.describeExit()));
        });
      });
    }
    if (this.port !== undefined) {
      while (!(await canConnect(this.port))) {
        if (!this.alive) throw new Error(this.describeExit());
        if (Date.now() > deadline) throw new Error(`${this.opts.name}: port ${this.port} not listening in time. ${this.stderrTail}`);
        await sleep(50);
      }
    }
    if (!this.alive) throw new Error(this.describeExit());
  }

  /** SIGTERM, then SIGKILL after graceMs. Resolves when the process has exited. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.alive || this.child.pid === undefined) return;
    try {
      process.kill(this.child.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
    const t = setTimeout(() => {
      try {
        if (this.alive) process.kill(this.child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, graceMs);
    await this.exited;
    clearTimeout(t);
  }
}

/** Spawns a (pinned) process and resolves once it listens. Registered for cleanup on exit. */
export async function startProcess(opts: StartOptions): Promise<ManagedProcess> {
  const p = new ManagedProcess(opts);
  try {
    await p.waitReady();
  } catch (e) {
    await p.stop(1000);
    throw e;
  }
  return p;
}

/** Stops every child this module started (by pid). */
export async function stopAll(graceMs = 3000): Promise<void> {
  await Promise.all([...children].map((c) => c.stop(graceMs)));
}

function killAllNow(): void {
  for (const c of children) {
    try {
      if (c.child.pid !== undefined) process.kill(c.child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

let cleanupInstalled = false;
/**
 * Makes sure no child outlives the orchestrator: on normal exit, on SIGINT/SIGTERM/SIGHUP, on an
 * uncaught error, and after hardTimeoutMs (a bound on the whole run).
 */
export function installCleanup(hardTimeoutMs?: number): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on('exit', killAllNow);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      process.stderr.write(`\n${sig}: stopping benchmark processes\n`);
      void stopAll(1500).finally(() => process.exit(130));
    });
  }
  const fatal = (e: unknown): void => {
    process.stderr.write(`\nbenchmark failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    void stopAll(1500).finally(() => process.exit(1));
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
  if (hardTimeoutMs) {
    setTimeout(() => fatal(new Error(`hard time limit of ${Math.round(hardTimeoutMs / 1000)} s reached`)), hardTimeoutMs).unref();
  }
}

/** Pins this process and all its threads to a core list (load generator side). */
export function pinSelf(cpu: string): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpu, String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function canConnect(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** A free TCP port on 127.0.0.1 (tiny race between close and reuse; fine on a quiet machine). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP targets

/** One thing to send load to: the gateway, the upstream directly, or any other contender. */
export interface HttpTarget {
  name: string;
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  /** The server process whose CPU/RSS the figures are about. */
  proc: ManagedProcess;
  /** Extra args for benchmarks/fixed-rate.lua (after `--`). */
  wrkArgs: string[];
  /** Extra headers ("Name: value") for fixed-rate.lua, passed after its max-pause argument. */
  wrkHeaders?: string[];
}

// ---------------------------------------------------------------------------------------------
// Load generators

export interface ThroughputResult {
  tool: 'autocannon';
  connections: number;
  durationS: number;
  requests: number;
  rps: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latencyMs: { p50: number; p99: number; mean: number; max: number };
}

/** Closed-loop max throughput with autocannon's programmatic API (runs in this process). */
export async function runAutocannon(
  target: HttpTarget,
  opts: { connections: number; durationS: number; overallRate?: number },
): Promise<ThroughputResult> {
  const r = await autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    body: target.body,
    connections: opts.connections,
    duration: opts.durationS,
    pipelining: 1,
    timeout: 10,
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
  });
  return {
    tool: 'autocannon',
    connections: opts.connections,
    durationS: r.duration,
    requests: r.requests.total,
    rps: r.requests.total / r.duration,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    latencyMs: { p50: r.latency.p50, p99: r.latency.p99, mean: r.latency.mean, max: r.latency.max },
  };
}

/** Path of the executable `name` on PATH, or null. */
export function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, name);
    if (dir && existsSync(p)) return p;
  }
  return null;
}

let wrkPath: string | null | undefined;
/** Path of the wrk binary, or null when it is not installed. */
export function findWrk(): string | null {
  if (wrkPath !== undefined) return wrkPath;
  // BENCH_NO_WRK=1 forces the autocannon fallback (testing).
  wrkPath = process.env.BENCH_NO_WRK === '1' ? null : onPath('wrk');
  return wrkPath;
}

export const WRK_INSTALL_HINT = 'wrk is not installed. Install it with:  sudo apt-get update && sudo apt-get install -y wrk';

export interface WrkResult {
  tool: 'wrk';
  command: string;
  requests: number;
  durationS: number;
  rps: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  /** Latency in milliseconds (wrk measures in microseconds). */
  latencyMs: { min: number; mean: number; max: number; p50: number; p75: number; p90: number; p99: number; p999: number };
  raw: string;
}

/**
 * Runs wrk (pinned) with a Lua script whose done() prints `WRK_JSON {...}` (see fixed-rate.lua).
 * Args after `--` go to the script's init(args).
 */
export async function runWrk(opts: {
  url: string;
  script: string;
  scriptArgs?: string[];
  connections: number;
  threads?: number;
  durationS: number;
  cpu?: string;
  timeoutS?: number;
}): Promise<WrkResult> {
  const wrk = findWrk();
  if (!wrk) throw new Error(WRK_INSTALL_HINT);
  const args = [
    `-t${opts.threads ?? 1}`,
    `-c${opts.connections}`,
    `-d${opts.durationS}s`,
    `--timeout`,
    `${opts.timeoutS ?? 5}s`,
    '--latency',
    '-s',
    opts.script,
    opts.url,
    ...(opts.scriptArgs?.length ? ['--', ...opts.scriptArgs] : []),
  ];
  const argv = opts.cpu !== undefined ? ['taskset', '-c', opts.cpu, wrk, ...args] : [wrk, ...args];
  const p = new ManagedProcess({ name: 'wrk', command: argv[0]!, args: argv.slice(1), discardStdout: false });
  let out = '';
  p.child.stdout!.setEncoding('utf8');
  p.child.stdout!.on('data', (s: string) => (out += s));
  await p.exited;
  const m = /^WRK_JSON (\{.*\})$/m.exec(out);
  if (!m) throw new Error(`wrk printed no WRK_JSON line:\n${out}\n${p.describeExit()}`);
  const j = JSON.parse(m[1]!) as {
    requests: number;
    duration_us: number;
    errors: WrkResult['errors'];
    latency_us: Record<keyof WrkResult['latencyMs'], number>;
  };
  const latencyMs = Object.fromEntries(Object.entries(j.latency_us).map(([k, v]) => [k, v / 1000])) as WrkResult['latencyMs'];
  return {
    tool: 'wrk',
    command: argv.map((a) => (a === '' || /[\s"'{}]/.test(a) ? `'${a}'` : a)).join(' '),
    requests: j.requests,
    durationS: j.duration_us / 1e6,
    rps: j.requests / (j.duration_us / 1e6),
    errors: j.errors,
    latencyMs,
    raw: out,
  };
}

// ---------------------------------------------------------------------------------------------
// Streams

export interface StreamSample {
  ttfbMs: number;
  totalMs: number;
  bytes: number;
}

/**
 * Sequential streaming requests over one keep-alive connection: time to first body byte and total
 * time for each. Checks that every stream ends with `data: [DONE]`.
 */
export async function timeStreams(
  target: Pick<HttpTarget, 'url' | 'headers' | 'body' | 'name'>,
  n: number,
  dispatcher: Agent,
): Promise<StreamSample[]> {
  const out: StreamSample[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await request(target.url, { method: 'POST', headers: target.headers, body: target.body, dispatcher });
    let ttfb = NaN;
    let bytes = 0;
    let tail = '';
    for await (const chunk of res.body) {
      if (bytes === 0) ttfb = performance.now() - t0;
      bytes += (chunk as Buffer).length;
      tail = (tail + (chunk as Buffer).toString('latin1')).slice(-64);
    }
    const total = performance.now() - t0;
    if (res.statusCode !== 200 || !tail.includes('data: [DONE]')) {
      throw new Error(`${target.name}: stream ${i} bad (status ${res.statusCode}, tail ${JSON.stringify(tail)})`);
    }
    out.push({ ttfbMs: ttfb, totalMs: total, bytes });
  }
  return out;
}

export function keepAliveAgent(): Agent {
  return new Agent({ connections: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 120_000, pipelining: 1 });
}

/** One request; returns status, body text and response headers (for smoke checks). */
export async function fetchOnce(
  target: Pick<HttpTarget, 'url' | 'headers' | 'body' | 'method'>,
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  const res = await request(target.url, { method: target.method, headers: target.headers, body: target.body });
  return { status: res.statusCode, body: await res.body.text(), headers: res.headers };
}

// ---------------------------------------------------------------------------------------------
// Open-loop load at a fixed rate (routing experiments with slow or failing upstreams)

export interface OpenLoopResult {
  rate: number;
  durationS: number;
  /** Requests sent (rate × duration). */
  sent: number;
  /** Answers with a 2xx status. */
  ok: number;
  successRate: number;
  /** Count per status code; transport errors and timeouts under "error". */
  statuses: Record<string, number>;
  /** Latency from the scheduled send time to the end of the body (no coordinated omission), ms. */
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** The same over the 2xx answers only. */
  okLatencyMs: { p50: number; p90: number; p99: number; max: number };
  /** Count per value of opts.countHeader (e.g. which target answered). */
  headerCounts: Record<string, number>;
  /** Largest delay between a request's scheduled time and its actual send, ms (load generator lag). */
  maxSendLagMs: number;
}

function latencySummary(xs: number[]): OpenLoopResult['latencyMs'] {
  return { p50: percentile(xs, 50), p90: percentile(xs, 90), p99: percentile(xs, 99), max: xs.length ? Math.max(...xs) : NaN };
}

/**
 * Sends requests at a fixed rate whatever the answers' latency (open loop): request i is due at
 * i / rate seconds and its latency counts from that moment. For routing experiments, where one
 * target is slow or failing and latencies run to hundreds of ms, so a closed-loop tool would lower
 * the rate. Runs in this process with an undici Agent of up to `connections` sockets.
 */
export async function runOpenLoop(
  target: Pick<HttpTarget, 'url' | 'headers' | 'body' | 'method' | 'name'>,
  opts: { rate: number; durationS: number; connections?: number; timeoutMs?: number; countHeader?: string },
): Promise<OpenLoopResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const agent = new Agent({ connections: opts.connections ?? 512, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const total = Math.max(1, Math.round(opts.rate * opts.durationS));
  const all: number[] = [];
  const okLat: number[] = [];
  const statuses: Record<string, number> = {};
  const headerCounts: Record<string, number> = {};
  const inflight = new Set<Promise<void>>();
  let ok = 0;
  let maxLag = 0;
  const fire = (intended: number): void => {
    const p: Promise<void> = request(target.url, { method: target.method, headers: target.headers, body: target.body, dispatcher: agent })
      .then(async (res) => {
        await res.body.text();
        const ms = performance.now() - intended;
        all.push(ms);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (opts.countHeader) {
          const v = String(res.headers[opts.countHeader] ?? '(none)');
          headerCounts[v] = (headerCounts[v] ?? 0) + 1;
        }
        if (res.statusCode >= 200 && res.statusCode < 300) {
          ok++;
          okLat.push(ms);
        }
      })
      .catch(() => {
        all.push(performance.now() - intended);
        statuses.error = (statuses.error ?? 0) + 1;
      })
      .finally(() => inflight.delete(p));
    inflight.add(p);
  };
  const t0 = performance.now();
  let sent = 0;
  try {
    while (sent < total) {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - t0) * opts.rate) / 1000) + 1);
      for (; sent < due; sent++) {
        const intended = t0 + (sent * 1000) / opts.rate;
        maxLag = Math.max(maxLag, now - intended);
        fire(intended);
      }
      if (sent < total) await sleep(Math.max(0, t0 + (sent * 1000) / opts.rate - performance.now()));
    }
    await Promise.all([...inflight]);
  } finally {
    await agent.close();
  }
  return {
    rate: opts.rate,
    durationS: opts.durationS,
    sent: total,
    ok,
    successRate: ok / total,
    statuses,
    latencyMs: latencySummary(all),
    okLatencyMs: latencySummary(okLat),
    headerCounts,
    maxSendLagMs: maxLag,
  };
}

// ---------------------------------------------------------------------------------------------
// Redis (a few raw RESP commands: no client library needed to flush the bench db or find the pid)

/**
 * Sends commands to the Redis at `url` (redis://[user:pass@]host:port/db; SELECTs the db first) and
 * returns their replies as strings. An error reply rejects.
 */
export function redisCommands(url: string, cmds: string[][], timeoutMs = 3000): Promise<string[]> {
  const u = new URL(url);
  const db = Number(u.pathname.replace(/^\//, '') || 0);
  const pre: string[][] = [];
  if (u.password) pre.push(u.username ? ['AUTH', decodeURIComponent(u.username), decodeURIComponent(u.password)] : ['AUTH', decodeURIComponent(u.password)]);
  if (db) pre.push(['SELECT', String(db)]);
  const all = [...pre, ...cmds];
  const encode = (c: string[]): string => `*${c.length}\r\n${c.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: u.hostname || '127.0.0.1', port: Number(u.port || 6379) });
    let buf = Buffer.alloc(0);
    const replies: string[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`redis ${url}: no answer in ${timeoutMs} ms`));
    }, timeoutMs);
    const fail = (e: Error): void => {
      clearTimeout(timer);
      sock.destroy();
      reject(e);
    };
    sock.once('error', fail);
    sock.once('connect', () => sock.write(all.map(encode).join('')));
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const eol = buf.indexOf('\r\n');
        if (eol < 0) return;
        const kind = String.fromCharCode(buf[0]!);
        const line = buf.subarray(1, eol).toString('utf8');
        if (kind === '$') {
          const n = Number(line);
          if (n < 0) {
            replies.push('');
            buf = buf.subarray(eol + 2);
          } else {
            if (buf.length < eol + 2 + n + 2) return;
            replies.push(buf.subarray(eol + 2, eol + 2 + n).toString('utf8'));
            buf = buf.subarray(eol + 2 + n + 2);
          }
        } else if (kind === '-') {
          fail(new Error(`redis ${url}: ${line}`));
          return;
        } else {
          replies.push(line); // + simple string, : integer
          buf = buf.subarray(eol + 2);
        }
        if (replies.length === all.length) {
          clearTimeout(timer);
          sock.end();
          resolve(replies.slice(pre.length));
          return;
        }
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Machine info and formatting

export function machineInfo(): Record<string, unknown> {
  const cpuinfo = (() => {
    try {
      return readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      return '';
    }
  })();
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  let nproc = os.availableParallelism();
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    /* keep */
  }
  const wrk = findWrk();
  let wrkVersion: string | null = null;
  if (wrk) {
    try {
      execFileSync(wrk, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      // wrk --version exits 1 after printing its banner
      wrkVersion = String((e as { stdout?: string }).stdout ?? '').split('\n')[0]!.replace(/\s*Copyright.*$/, '').trim() || null;
    }
  }
  const pkgVersion = (name: string): string | null => {
    try {
      return (JSON.parse(readFileSync(path.join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      return null;
    }
  };
  return {
    nproc,
    cpuModel: model,
    memTotalGb: round(os.totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    clkTck: clockTicksPerSecond(),
    loadavgAtStart: os.loadavg().map((x) => round(x, 2)),
    wrk: wrkVersion,
    autocannon: pkgVersion('autocannon'),
    undici: pkgVersion('undici'),
  };
}

/** Renders rows as a fixed-width text table. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => String(c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export function fmt(x: number | undefined, digits = 2): string {
  if (x === undefined || !Number.isFinite(x)) return '-';
  return x.toFixed(digits);
}
