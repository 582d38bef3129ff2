import { z } from 'zod';
import { parseOrThrow } from '../config/issues.js';
import { callerScope, fieldError } from './common.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import type { RequestLogPage, RequestLogQuery, RequestLogStore } from '../state/request-log-store.js';

export const LOGS_PAGE_SIZE_DEFAULT = 50;
export const LOGS_PAGE_SIZE_MAX = 100;
/** `metadata.<key>=<value>` filters: the header's bounds (keys up to 128 characters, values up to 1024). */
const METADATA_PREFIX = 'metadata.';
const METADATA_KEY_MAX = 128;
const METADATA_VALUE_MAX = 1024;

const count = z
  .string()
  .regex(/^\d{1,9}$/, 'must be a non-negative integer')
  .transform(Number);

/** A date with a time needs its zone: local time on the server is nobody's. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** Epoch milliseconds, or an ISO 8601 date (UTC midnight) or date-time with its zone. */
const instant = z.string().transform((v, ctx) => {
  if (/^\d{1,15}$/.test(v)) return Number(v);
  const t = ISO_8601.test(v) ? Date.parse(v) : NaN;
  if (!Number.isNaN(t)) return t;
  ctx.addIssue({ code: 'custom', message: 'must be epoch milliseconds or an ISO 8601 date or date-time with a zone (2025-05-01, 2025-05-01T12:00:00Z)' });
  return z.NEVER;
});

const LogsQueryFields = z.strictObject({
  trace_id: z.string().min(1, 'must not be empty').max(128, 'at most 128 characters').optional(),
  workspace_id: z.string().min(1, 'must not be empty').max(128, 'at most 128 characters').optional(),
  status: z.string().regex(/^[1-5](\d\d|xx)$/i, 'must be a status (502) or a class (5xx)').optional(),
  from: instant.optional(),
  to: instant.optional(),
  page_size: count.pipe(z.number().max(LOGS_PAGE_SIZE_MAX, `at most ${LOGS_PAGE_SIZE_MAX}`)).default(LOGS_PAGE_SIZE_DEFAULT),
  current_page: count.default(0),
});

export const LogsQuerySchema = LogsQueryFields.refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, {
  path: ['to'],
  message: 'must not be before from',
});


/**
 * GET /v1/logs: validation, the caller's scope, the store's answer. `metadata.<key>` parameters are
 * taken apart first (their names are the caller's), the rest is a strict schema: an unknown or a
 * repeated parameter is a 400 naming it. A workspace key reads only its workspace's records (an
 * organisation key its organisation's, an operator key all); `workspace_id` narrows within that.
 */
export class LogsService {
  constructor(private readonly store: RequestLogStore) {}

  parse(query: unknown, key: ApiKeyRecord | undefined): RequestLogQuery {
    const rest: Record<string, unknown> = {};
    const metadata: [string, string][] = [];
    for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
      if (!k.startsWith(METADATA_PREFIX)) {
        if (!Object.hasOwn(LogsQueryFields.shape, k)) throw fieldError('invalid_query_parameter', k, 'unknown parameter (filters: trace_id, metadata.<key>, status, from, to, workspace_id)');
        rest[k] = v;
        continue;
      }
      const name = k.slice(METADATA_PREFIX.length);
      if (name === '' || name.length > METADATA_KEY_MAX) throw fieldError('invalid_query_parameter', k, `the metadata key must be 1-${METADATA_KEY_MAX} characters`);
      if (typeof v !== 'string') throw fieldError('invalid_query_parameter', k, 'must be given once');
      if (v.length > METADATA_VALUE_MAX) throw fieldError('invalid_query_parameter', k, `at most ${METADATA_VALUE_MAX} characters`);
      metadata.push([name, v]);
    }
    const p = parseOrThrow(LogsQuerySchema, rest, 'invalid_query_parameter', 'query');
    const q: RequestLogQuery = { scope: callerScope(key), page_size: p.page_size, current_page: p.current_page };
    if (p.trace_id !== undefined) q.trace_id = p.trace_id;
    if (p.workspace_id !== undefined) q.workspace_id = p.workspace_id;
    if (p.status !== undefined) {
      if (/xx$/i.test(p.status)) q.status_class = Number(p.status[0]);
      else q.status = Number(p.status);
    }
    if (p.from !== undefined) q.from = p.from;
    if (p.to !== undefined) q.to = p.to;
    if (metadata.length > 0) q.metadata = metadata;
    return q;
  }

  async query(query: unknown, key: ApiKeyRecord | undefined): Promise<RequestLogPage> {
    const q = this.parse(query, key);
    try {
      return await this.store.query(q);
    } catch (e) {
      throw new GatewayError('store_unavailable', 'The shared store (Redis) is not reachable or did not answer in time; retry the query.', { cause: e });
    }
  }
}
