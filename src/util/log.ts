import { pino, type Logger, type DestinationStream } from 'pino';
import { LogWriter } from './log-writer.js';

export type { Logger };

/**
 * One JSON logger. Nothing here logs headers or bodies; request lines (written in this logger's
 * format by src/request-log.ts) carry only the fields that module names, so a secret cannot reach the
 * log by accident (tests assert it). No redaction pass runs per line: it would cost CPU on every
 * request for fields that are never there.
 */
export function createLogger(level = 'info', destination?: DestinationStream): Logger {
  const opts = {
    level,
    base: undefined,
  };
  if (destination) return pino(opts, destination);
  // Lines are batched into ~64 KiB writes (one syscall for a hundred or more request lines; each write
  // hands a buffer to the thread pool, which costs more than the bytes) and written at
  // least every 250 ms and on exit, so logging stays a small part of a request's CPU.
  const dest = new LogWriter(1);
  process.once('exit', () => dest.flushSync());
  return pino(opts, dest);
}
