import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LogWriter } from '../../src/util/log-writer.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-log-'));
const open: number[] = [];
afterEach(() => {
  vi.useRealTimers();
  while (open.length) fs.closeSync(open.pop()!);
});

function tempFile(): { fd: number; read: () => string } {
  const file = path.join(dir, `log-${open.length}-${Date.now()}.ndjson`);
  const fd = fs.openSync(file, 'w');
  open.push(fd);
  return { fd, read: () => fs.readFileSync(file, 'utf8') };
}
const flushed = (w: LogWriter): Promise<void> => new Promise((resolve) => w.flush(() => resolve()));
const line = (i: number): string => `{"n":${i},"msg":"request ${'x'.repeat(i % 7)} é"}\n`;

describe('LogWriter', () => {
  it('writes nothing until a batch is full, then the lines in order', async () => {
    const f = tempFile();
    const w = new LogWriter(f.fd, { batchChars: 200, flushMs: 60_000 });
    w.write(line(0));
    w.write(line(1));
    expect(f.read()).toBe('');
    const lines = Array.from({ length: 50 }, (_, i) => line(i));
    for (const l of lines.slice(2)) w.write(l);
    await flushed(w);
    expect(f.read()).toBe(lines.join(''));
    w.flushSync();
  });

  it('writes waiting lines on its timer', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const f = tempFile();
    const w = new LogWriter(f.fd, { batchChars: 1 << 20, flushMs: 250 });
    w.write(line(1));
    vi.advanceTimersByTime(249);
    await flushed(new LogWriter(f.fd, { flushMs: 60_000 })); // a round trip through the thread pool
    expect(f.read()).toBe('');
    vi.advanceTimersByTime(1);
    await flushed(w);
    expect(f.read()).toBe(line(1));
    w.flushSync();
  });

  it('flushSync writes what is waiting at once', () => {
    const f = tempFile();
    const w = new LogWriter(f.fd, { batchChars: 1 << 20, flushMs: 60_000 });
    w.write(line(1));
    w.write(line(2));
    w.flushSync();
    expect(f.read()).toBe(line(1) + line(2));
  });

  it('drops and counts lines beyond its bound instead of growing without limit', async () => {
    const f = tempFile();
    const w = new LogWriter(f.fd, { batchChars: 1 << 20, maxChars: 100, flushMs: 60_000 });
    const l = 'y'.repeat(39) + '\n';
    expect([w.write(l), w.write(l), w.write(l)]).toEqual([true, true, false]);
    expect(w.dropped).toBe(1);
    await flushed(w);
    expect(f.read()).toBe(l + l);
    expect(w.write(l)).toBe(true); // room again once written
    w.flushSync();
  });

  it('through a full non-blocking pipe (EAGAIN, partial writes) every line arrives once, in order', async () => {
    const src = fileURLToPath(new URL('../../src/util/log-writer.ts', import.meta.url));
    // The child makes its stdout pipe non-blocking (by touching process.stdout) and writes 4 MB of
    // lines while the parent does not read; once the writer has met EAGAIN it says so on stderr, the
    // parent starts reading, and the child exits when the writer has drained.
    const script = `
      import { LogWriter } from ${JSON.stringify(src)};
      process.stdout;
      const w = new LogWriter(1, { retryMs: 5 });
      for (let i = 0; i < 40000; i++) w.write(JSON.stringify({ n: i, pad: 'z'.repeat(80) }) + '\\n');
      const t = setInterval(() => { if (w.retries > 0) { clearInterval(t); process.stderr.write('blocked\\n'); } }, 5);
      w.flush(() => process.exit(0));
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pause();
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (b: Buffer) => (b.toString().includes('blocked') ? resolve() : reject(new Error(b.toString()))));
      child.on('exit', () => reject(new Error('the child exited before its pipe filled')));
    });
    child.stdout.on('data', (b: Buffer) => chunks.push(b));
    child.stdout.resume();
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(code).toBe(0);
    const got = Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
    expect(got.length).toBe(40000);
    got.forEach((l, i) => expect((JSON.parse(l) as { n: number }).n).toBe(i));
  });

  it('flushSync at exit waits out a full non-blocking pipe and delivers every line', async () => {
    const src = fileURLToPath(new URL('../../src/util/log-writer.ts', import.meta.url));
    // 2 MB waiting (no batch started), far more than a pipe holds. The parent reads only once the
    // child says (on stderr) that flushSync is waiting for the full pipe: it must wait, not drop.
    const script = `
      import { LogWriter } from ${JSON.stringify(src)};
      process.stdout;
      const w = new LogWriter(1, { batchChars: 1 << 30 });
      for (let i = 0; i < 20000; i++) w.write(JSON.stringify({ n: i, pad: 'q'.repeat(80) }) + '\\n');
      w.flushSync();
      process.exit(0);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pause();
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (b: Buffer) => (b.toString().includes('waiting for the log output') ? resolve() : reject(new Error(b.toString()))));
      child.on('exit', () => reject(new Error('the child exited without waiting for its pipe')));
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => chunks.push(b));
    child.stdout.resume();
    expect(await new Promise<number | null>((r) => child.on('close', r))).toBe(0);
    const got = Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
    expect(got.length).toBe(20000);
    got.forEach((l, i) => expect((JSON.parse(l) as { n: number }).n).toBe(i));
  });
});
