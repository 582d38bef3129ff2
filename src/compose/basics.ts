import type { Bootstrap } from '../config/bootstrap.js';
import type { ServerOptions } from '../config/options.js';
import type { PrometheusTelemetry } from '../metrics/prometheus.js';
import type { Logger } from '../util/log.js';

/** What every builder of the composition root reads: the options, the bootstrap file, the log, metrics and the clock. */
export interface Basics {
  options: ServerOptions;
  bootstrap: Bootstrap | undefined;
  logger: Logger;
  telemetry: PrometheusTelemetry;
  /** Epoch ms (tests pass a fake one for breaker cooldowns). */
  now: () => number;
}
