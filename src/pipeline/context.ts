import type { Dispatchers } from '../upstream/call.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { ProviderRequest, Usage } from '../providers/types.js';
import type { SchedulerLike } from 'rxjs';

/** What every operator may use; handed in, never imported. */
export interface PipelineDeps {
  registry: ProviderRegistry;
  dispatchers: Dispatchers;
  /** Idle limit between stream chunks once a stream has started (ms). */
  streamIdleTimeoutMs: number;
  scheduler?: SchedulerLike;
}

/** One request's state as it flows through the pipeline. */
export interface RequestContext {
  traceId: string;
  request: ProviderRequest;
  /** Filled as the pipeline runs, read by the log line. */
  usage?: Usage;
  attempts: number;
}
