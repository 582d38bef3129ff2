/**
 * Request records (GET /v1/logs), behind a port: one record per proxied request, appended when its
 * response closes, kept in a bounded store (a memory ring, or one capped Redis stream shared by every
 * instance) and queried newest first. A record holds what the request's log line holds plus its
 * scope and model: never a prompt, an answer, a header or a key.
 */
import type { Usage } from '../config/wire.js';
import { visibleTo } from '../security/tenancy.js';

/** One request, as stored and answered by GET /v1/logs (the names are the stdout line's). */
export interface RequestLogRecord {
  /** When the response closed, epoch ms. */
  time: number;
  trace_id: string;
  method?: string;
  /** The request path without its query string. */
  path: string;
  /** The status sent; 499 when the client left before the answer was complete. */
  status: number;
  latency_ms: number;
  /** x-gateway-metadata as sent (special keys `_user`, `_prompt`, `_organisation`, `_environment`). */
  metadata?: Record<string, unknown>;
  /** The prompt template version that rendered the request (a config naming `prompt_id`). */
  prompt?: { readonly id: string; readonly slug: string; readonly version_id: string };
  /** The gateway key's name, workspace and organisation (absent without a valid key). */
  key_name?: string;
  workspace_id?: string;
  organisation_id?: string;
  /** `model` of the request body, when it names one. */
  model?: string;
  stream?: boolean;
  /** Upstream attempts made, every target and retry counted. */
  attempts?: number;
  /** Retries of the target that answered (or failed last): x-gateway-retry-attempt-count. */
  retries?: number;
  provider?: string;
  /** JSON path of the target that answered (or failed last). */
  target?: string;
  /** x-gateway-cache-status. */
  cache?: string;
  usage?: Usage;
  /** The request's cost, when the gateway priced it. */
  cost?: number;
  /** Hook and guardrail verdicts: `[{id, list, verdict, deny?, feedback?}]`. */
  hooks?: Readonly<Record<string, unknown>>[];
  error?: { code: string; status: number; message: string };
  client_aborted?: true;
}

/** Whose records a caller may read (security/tenancy.ts `visibleTo`). Empty: an operator key, every record. */
export interface RequestLogScope {
  workspace_id?: string;
  organisation_id?: string;
}

export interface RequestLogQuery {
  /** The caller's scope (from its gateway key). */
  scope: RequestLogScope;
  /** Narrows further, within the scope. */
  workspace_id?: string;
  trace_id?: string;
  /** `metadata.<key>=<value>` pairs, each an exact match of the value's text (`String(v)`). */
  metadata?: readonly (readonly [string, string])[];
  /** An exact status, or a class: 5 for `5xx`. */
  status?: number;
  status_class?: number;
  /** Epoch ms, both inclusive. */
  from?: number;
  to?: number;
  /** 0 answers only the total. */
  page_size: number;
  /** 0-based; a page past the end answers no items. */
  current_page: number;
}

export interface RequestLogPage {
  object: 'list';
  data: RequestLogRecord[];
  total: number;
}

export interface RequestLogStore {
  readonly kind: 'memory' | 'redis';
  /** The most records kept (the oldest go first). */
  readonly capacity: number;
  /** Never throws and never waits: the memory ring stores at once, Redis is written in the background. */
  append(record: RequestLogRecord): void;
  /** Matching records visible to the scope, newest first, one page of them, and how many match. */
  query(q: RequestLogQuery): Promise<RequestLogPage>;
  close(): void;
}

/** Does `r` match every filter of `q`, and may `q.scope` see it? */
export function matches(r: RequestLogRecord, q: RequestLogQuery): boolean {
  if (!visibleTo(r, q.scope)) return false;
  if (q.workspace_id !== undefined && r.workspace_id !== q.workspace_id) return false;
  if (q.trace_id !== undefined && r.trace_id !== q.trace_id) return false;
  if (q.status !== undefined && r.status !== q.status) return false;
  if (q.status_class !== undefined && Math.floor(r.status / 100) !== q.status_class) return false;
  if (q.from !== undefined && r.time < q.from) return false;
  if (q.to !== undefined && r.time > q.to) return false;
  if (q.metadata) {
    const m = r.metadata;
    if (!m) return false;
    for (const [k, v] of q.metadata) {
      if (!Object.hasOwn(m, k) || String(m[k]) !== v) return false;
    }
  }
  return true;
}

/**
 * Collects a page while records are offered newest first: counts every match, keeps those of the
 * requested page. `offer` returns the number matched so far.
 */
export class PageCollector {
  private readonly start: number;
  private readonly end: number;
  readonly data: RequestLogRecord[] = [];
  total = 0;

  constructor(private readonly q: RequestLogQuery) {
    this.start = q.page_size * q.current_page;
    this.end = this.start + q.page_size;
  }

  offer(r: RequestLogRecord): void {
    if (!matches(r, this.q)) return;
    if (this.total >= this.start && this.total < this.end) this.data.push(r);
    this.total++;
  }

  page(): RequestLogPage {
    return { object: 'list', data: this.data, total: this.total };
  }
}

export const REQUEST_LOG_SIZE_DEFAULT = 10_000;
