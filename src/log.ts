import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * One JSON logger. Nothing here logs headers or bodies; request lines carry only the fields the
 * request log names, so a secret cannot reach the log by accident (tests assert it). No redaction
 * pass runs per line: it would cost CPU on every request for fields that are never there.
 */
export function createLogger(level = 'info', destination?: DestinationStream): Logger {
  const opts = {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(opts, destination) : pino(opts, pino.destination({ sync: false }));
}
