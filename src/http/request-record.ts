import type { PromptUse } from '../pipeline/prompt.js';
import type { RequestLogRecord } from '../state/request-log-store.js';
import { memoByObject } from '../util/memo.js';
import { hooksSummary, type RequestLogSource } from './request-log.js';

/** What a request's record is read from: the log line's source (an `Exchange`) plus the retries. */
export interface RequestRecordSource extends RequestLogSource {
  readonly ctx: NonNullable<RequestLogSource['ctx']> | undefined;
  readonly meta: (NonNullable<RequestLogSource['meta']> & { readonly retries?: number }) | undefined;
}

/**
 * The request's record for GET /v1/logs: the log line's fields under the same names (built from
 * the same exchange, no second parse), plus `time`, the key's workspace and organisation, the body's
 * `model` and the answering target's `retries`. Of the body only
 * `model` is read: no prompt, answer, header or key reaches a record. Objects the exchange already
 * holds (metadata, usage) are shared, not copied.
 */
export function requestRecord(ex: RequestRecordSource, latencyMs: number, time: number): RequestLogRecord {
  const { req, ctx, meta, error, gatewayKey: key } = ex;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const r: RequestLogRecord = {
    time,
    trace_id: ex.traceId,
    path: q < 0 ? url : url.slice(0, q),
    status: ex.clientAborted ? 499 : ex.res.statusCode,
    latency_ms: latencyMs,
  };
  if (req.method !== undefined) r.method = req.method;
  if (ex.settings.metadata) r.metadata = ex.settings.metadata;
  if (ex.prompt) r.prompt = promptOf(ex.prompt);
  if (key) {
    r.key_name = key.name;
    if (key.workspace_id !== undefined) r.workspace_id = key.workspace_id;
    if (key.organisation_id !== undefined) r.organisation_id = key.organisation_id;
  }
  if (ctx) {
    const model = ctx.request.body?.model;
    if (typeof model === 'string') r.model = model;
    r.stream = ctx.request.stream;
    const o = ctx.outcome;
    r.attempts = o.attempts;
    if (o.usage) r.usage = o.usage;
    if (o.cost !== undefined) r.cost = o.cost;
    if (o.hooks && o.hooks.before.length + o.hooks.after.length > 0) r.hooks = hooksSummary(o.hooks.before, o.hooks.after);
  }
  if (meta) {
    r.provider = meta.provider;
    r.target = meta.target;
    if (meta.retries !== undefined) r.retries = meta.retries;
    if (meta.cacheStatus) r.cache = meta.cacheStatus;
  }
  if (error) r.error = { code: error.code, status: error.status, message: error.message };
  if (ex.clientAborted) r.client_aborted = true;
  return r;
}

/**
 * The record's `prompt`: the version's id, slug and version_id, made once per stored version and
 * shared (frozen) by every record of a request it rendered, as records are kept.
 */
const promptOf = memoByObject((p: PromptUse): RequestLogRecord['prompt'] => Object.freeze({ id: p.id, slug: p.slug, version_id: p.version_id }));
