import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * One JSON logger. Nothing here logs headers or bodies; request lines carry only the fields the
 * request log names, so a secret cannot reach the log by accident. The redact list is a second net.
 */
export function createLogger(level = 'info', destination?: DestinationStream): Logger {
  const opts = {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['api_key', '*.api_key', 'authorization', '*.authorization', 'headers', '*.headers', 'key', '*.key'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(opts, destination) : pino(opts, pino.destination({ sync: false }));
}
