import type { Usage } from '../providers/types.js';

/** Which target answered: becomes the x-gateway-* response headers and the log line. */
export interface AnswerMeta {
  provider: string;
  /** JSON path of the answering target, e.g. `config.targets[1]`. */
  target: string;
  retries: number;
  /** x-gateway-cache-status: HIT, SEMANTIC_HIT, MISS, REFRESH; DISABLED when absent. */
  cacheStatus?: string;
  /**
   * Parameters clamped into this provider's ranges, `field=from->to` comma-separated
   * (x-gateway-params-mapped, the log line's `params_mapped`); absent when none was.
   */
  paramsMapped?: string;
  /** Upstream response headers passed on to the client (request id, rate limits). */
  upstreamHeaders?: Record<string, string>;
  /**
   * A check of this answer's output guardrails or after hooks failed without deny (246): the answer
   * is not cached, since a hit would replay it without the failure.
   */
  hooksFailed?: boolean;
}

/**
 * What a plan emits. A non-stream request: one `json`. A stream: `stream-start` (sent together with
 * the first chunk, so nothing reaches the client before there is content), then `chunk`s; completion
 * means the stream ended cleanly. Errors travel on the error channel as GatewayError.
 */
export type GatewayEvent =
  | { type: 'json'; status: number; body: unknown; raw?: string; meta: AnswerMeta; usage?: Usage }
  | { type: 'stream-start'; meta: AnswerMeta }
  /** `event`: the SSE event name, for front doors whose streams name events (written by their framing). `comment`: written as an SSE comment line (`: data`) that clients ignore (a stream's closing `hook_results`). */
  | { type: 'chunk'; data: string; usage?: Usage; comment?: true; event?: string };
