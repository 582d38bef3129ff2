import fs from 'node:fs';

/** For short synchronous sleeps at exit (Atomics.wait on a buffer nobody notifies). */
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

export interface LogWriterOptions {
  /** A batch is written once this many characters are waiting (default 64 KiB). */
  batchChars?: number;
  /** Waiting lines are written at least this often, in ms (default 250). */
  flushMs?: number;
  /** Lines beyond this many waiting characters are dropped and counted (default 16 MiB). */
  maxChars?: number;
  /** Wait before retrying a write the descriptor refused with EAGAIN (a full non-blocking pipe). */
  retryMs?: number;
}

/**
 * A pino destination that batches lines into few asynchronous writes to a file descriptor.
 *
 * Why not pino.destination (sonic-boom) with `minLength`: each line's `write` measures the byte
 * length of the string it appends to, which flattens the growing batch, so every log line copied the
 * whole batch, costing more per request line than pino's own serialisation. This keeps the lines
 * in an array and joins them once per batch.
 *
 * Lines are written whole and in order; at most one write is in flight. A write the pipe refuses
 * (EAGAIN) is retried; other errors drop that batch and are reported once on stderr. `flushSync`
 * writes everything still waiting, for process exit; a batch whose asynchronous write is still in
 * flight then is written again (a line may be duplicated at exit rather than lost).
 */
export class LogWriter {
  private parts: string[] = [];
  private waiting = 0;
  /** Bytes of the batch being written that the descriptor has not taken yet. */
  private inFlight: Buffer | undefined;
  private readonly batchChars: number;
  private readonly maxChars: number;
  private readonly retryMs: number;
  private readonly timer: NodeJS.Timeout;
  private reported = false;
  private idle: ((err?: Error) => void)[] = [];
  /** Lines dropped because too much was waiting. */
  dropped = 0;
  /** Writes the descriptor refused with EAGAIN and that were retried. */
  retries = 0;

  constructor(
    private readonly fd: number,
    opts: LogWriterOptions = {},
  ) {
    this.batchChars = opts.batchChars ?? 64 * 1024;
    this.maxChars = opts.maxChars ?? 16 * 1024 * 1024;
    this.retryMs = opts.retryMs ?? 50;
    this.timer = setInterval(() => this.flush(), opts.flushMs ?? 250);
    this.timer.unref();
  }

  write(line: string): boolean {
    if (this.waiting + line.length > this.maxChars) {
      if (this.dropped++ === 0) {
        process.stderr.write(`sluice: the request log cannot keep up with its output; dropping lines (more than ${this.maxChars} characters waiting)\n`);
      }
      return false;
    }
    this.parts.push(line);
    this.waiting += line.length;
    if (this.waiting >= this.batchChars) this.flush();
    return true;
  }

  /**
   * Start writing what is waiting, unless a write is already in flight (it continues on its own).
   * `done` (pino's logger.flush callback) is called once nothing is waiting or in flight.
   */
  flush(done?: (err?: Error) => void): void {
    if (done) this.idle.push(done);
    if (!this.inFlight && this.waiting > 0) {
      this.inFlight = this.take();
      this.writeSome();
    }
    if (!this.inFlight) this.settle();
  }

  /**
   * Write everything synchronously: the batch in flight (its unwritten part), then what waits. A full
   * non-blocking pipe (EAGAIN) is waited on in short sleeps for up to `exitWaitMs` without progress.
   */
  flushSync(exitWaitMs = 5000): void {
    clearInterval(this.timer);
    const pending = this.inFlight;
    this.inFlight = undefined;
    const rest = this.waiting > 0 ? this.take() : undefined;
    let told = false;
    for (const buf of [pending, rest]) {
      let b = buf;
      let stuckSince = 0;
      while (b && b.length > 0) {
        try {
          b = b.subarray(fs.writeSync(this.fd, b));
          stuckSince = 0;
        } catch (e) {
          const now = Date.now();
          if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || now - (stuckSince ||= now) > exitWaitMs) {
            this.report(e as Error);
            return;
          }
          if (!told) process.stderr.write('sluice: waiting for the log output to take the last lines\n');
          told = true;
          Atomics.wait(SLEEPER, 0, 0, 5);
        }
      }
    }
  }

  private take(): Buffer {
    const text = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    this.parts = [];
    this.waiting = 0;
    return Buffer.from(text, 'utf8');
  }

  private writeSome(): void {
    const buf = this.inFlight!;
    fs.write(this.fd, buf, 0, buf.length, null, (err, written) => {
      if (this.inFlight !== buf) return; // flushSync took over
      if (err) {
        if (err.code === 'EAGAIN') {
          this.retries++;
          setTimeout(() => this.inFlight === buf && this.writeSome(), this.retryMs);
          return;
        }
        this.report(err);
        this.inFlight = undefined;
      } else if (written < buf.length) {
        this.inFlight = buf.subarray(written);
        this.writeSome();
        return;
      } else {
        this.inFlight = undefined;
      }
      if (this.waiting >= this.batchChars || (this.idle.length > 0 && this.waiting > 0)) this.flush();
      else this.settle();
    });
  }

  private settle(): void {
    if (this.inFlight || this.waiting > 0 || this.idle.length === 0) return;
    const idle = this.idle;
    this.idle = [];
    for (const cb of idle) cb();
  }

  private report(err: Error): void {
    if (this.reported) return;
    this.reported = true;
    process.stderr.write(`sluice: request log lines lost, the log descriptor failed: ${err.message}\n`);
  }
}
