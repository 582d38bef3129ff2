import { pino, type Logger } from 'pino';
import type { Usage } from '../config/wire.js';
import type { PromptUse } from '../pipeline/prompt.js';
import { IdVariants } from '../util/id-variants.js';
import { jsonNumber as num, jsonString as str } from '../util/json-write.js';

/**
 * What a request line is read from: the exchange itself (`Exchange` fits this shape), so nothing is
 * copied into an intermediate object per request.
 */
export interface RequestLogSource {
  readonly traceId: string;
  readonly req: { readonly method?: string; readonly url?: string };
  readonly res: { readonly statusCode: number };
  readonly settings: { readonly metadata?: Record<string, unknown> };
  /** The prompt template version that rendered the request: its id, slug and version_id only (never its text). */
  readonly prompt?: PromptUse | undefined;
  readonly ctx:
    | {
        /** Of the body only `model` is read (a string, else nothing is written). */
        readonly request: { readonly stream: boolean; readonly body?: Record<string, unknown> | undefined };
        /** What the request's stages learned (src/pipeline/outcome.ts). */
        readonly outcome: RequestLogOutcome;
      }
    | undefined;
  readonly meta: { readonly provider: string; readonly target: string; readonly cacheStatus?: string; readonly paramsMapped?: string } | undefined;
  readonly error: { readonly code: string; readonly status: number; readonly message: string } | undefined;
  readonly clientAborted: boolean;
  readonly gatewayKey: { readonly name: string; readonly workspace_id?: string; readonly organisation_id?: string } | undefined;
}

/** The part of a request's outcome the log line and the record read. */
export interface RequestLogOutcome {
  readonly attempts: number;
  readonly usage?: Usage | undefined;
  /** The request's cost in USD, when priced. */
  readonly cost?: number | undefined;
  readonly hooks?: { readonly before: readonly HookLogEntry[]; readonly after: readonly HookLogEntry[] } | undefined;
}

/** What the log line says of a hook: its id, verdict, whether it denied, and its feedback; never the checked text. */
export interface HookLogEntry {
  readonly id: string;
  readonly verdict: boolean;
  readonly deny: boolean;
  readonly feedback?: { readonly value?: number; readonly weight?: number; readonly metadata?: Record<string, unknown> };
}

type HookListName = 'before_request_hooks' | 'after_request_hooks';

/**
 * A summary entry without feedback depends only on the hook's id, list, verdict and deny: made once
 * with its JSON text (for the log line), shared (frozen). Variant bits: 4 after, 2 verdict, 1 deny.
 */
const SHARED = new IdVariants<{ entry: Readonly<Record<string, unknown>>; json: string }>((id, v) => {
  const e: Record<string, unknown> = { id, list: v & 4 ? 'after_request_hooks' : 'before_request_hooks', verdict: (v & 2) !== 0 };
  if (v & 1) e.deny = true;
  return { entry: Object.freeze(e), json: JSON.stringify(e) };
});

const shared = (list: HookListName, h: HookLogEntry) => SHARED.get(h.id, (list === 'after_request_hooks' ? 4 : 0) | (h.verdict ? 2 : 0) | (h.deny ? 1 : 0));

function summaryEntry(list: HookListName, h: HookLogEntry): Readonly<Record<string, unknown>> {
  const { entry } = shared(list, h);
  return h.feedback ? { ...entry, feedback: h.feedback } : entry;
}

/**
 * The hooks' part of a log line: `[{id, list, verdict, deny?, feedback?}]`. Entries without feedback
 * are shared between requests (frozen): a request's summary is kept in its record (GET /v1/logs), so
 * an entry made per request would be kept too.
 */
export function hooksSummary(before: readonly HookLogEntry[], after: readonly HookLogEntry[]): Readonly<Record<string, unknown>>[] {
  const out: Readonly<Record<string, unknown>>[] = [];
  for (const h of before) out.push(summaryEntry('before_request_hooks', h));
  for (const h of after) out.push(summaryEntry('after_request_hooks', h));
  return out;
}

/** `JSON.stringify(hooksSummary(before, after))`, from each shared entry's text. */
function hooksJson(before: readonly HookLogEntry[], after: readonly HookLogEntry[]): string {
  let s = '[';
  for (let i = 0; i < before.length; i++) s += (i > 0 ? ',' : '') + entryJson('before_request_hooks', before[i]!);
  for (let i = 0; i < after.length; i++) s += (i > 0 || before.length > 0 ? ',' : '') + entryJson('after_request_hooks', after[i]!);
  return s + ']';
}

const entryJson = (list: HookListName, h: HookLogEntry): string => (h.feedback ? JSON.stringify(summaryEntry(list, h)) : shared(list, h).json);

/** Writes one request's log line (nothing when the logger's level is above `info`). */
export type RequestLogWriter = (ex: RequestLogSource, latencyMs: number) => void;

/**
 * The request line, serialized directly: the same bytes `logger.info({ msg: 'request', ... })` writes
 * with the logger `createLogger` makes, without pino's generic per-key serialisation, which allocates and costs about twice as
 * much per line. This function is the one
 * place that defines the line: only these fields, in this order, an absent (undefined) one omitted as
 * pino omits it. Headers are never read here, and of the body only `model`, so neither a secret nor
 * a prompt can reach the log.
 *
 * Strings are written as JSON.stringify writes them. Pino before Node 25 escapes only `"` and `\` in
 * short strings without control characters: the same output except for a lone UTF-16 surrogate,
 * which pino writes raw (U+FFFD once encoded as UTF-8) and this writes as a `\udXXX` escape.
 */
function requestLine(ex: RequestLogSource, latencyMs: number): string {
  const { req, ctx, meta, error } = ex;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  let s = `{"level":30,"time":${Date.now()},"msg":"request","trace_id":${str(ex.traceId)}`;
  if (req.method !== undefined) s += `,"method":${str(req.method)}`;
  s += `,"path":${str(q < 0 ? url : url.slice(0, q))},"status":${ex.clientAborted ? CLIENT_CLOSED : num(ex.res.statusCode)},"latency_ms":${num(latencyMs)}`;
  if (ex.settings.metadata) s += `,"metadata":${JSON.stringify(ex.settings.metadata)}`;
  const p = ex.prompt;
  if (p) s += `,"prompt":{"id":${str(p.id)},"slug":${str(p.slug)},"version_id":${str(p.version_id)}}`;
  if (ctx) {
    if (ctx.request.stream !== undefined) s += `,"stream":${ctx.request.stream}`;
    const model = ctx.request.body?.model;
    if (typeof model === 'string') s += `,"model":${str(model)}`;
    const o = ctx.outcome;
    if (o.attempts !== undefined) s += `,"attempts":${num(o.attempts)}`;
    if (o.usage) s += `,"usage":${JSON.stringify(o.usage)}`;
    if (o.cost !== undefined) s += `,"cost":${num(o.cost)}`;
    if (o.hooks) s += `,"hooks":${hooksJson(o.hooks.before, o.hooks.after)}`;
  }
  if (meta) {
    if (meta.provider !== undefined) s += `,"provider":${str(meta.provider)}`;
    if (meta.target !== undefined) s += `,"target":${str(meta.target)}`;
    if (meta.cacheStatus) s += `,"cache":${str(meta.cacheStatus)}`;
    if (meta.paramsMapped !== undefined) s += `,"params_mapped":${str(meta.paramsMapped)}`;
  }
  if (error) s += `,"error":${JSON.stringify({ code: error.code, status: error.status, message: error.message })}`;
  if (ex.clientAborted) s += ',"client_aborted":true';
  const key = ex.gatewayKey;
  if (key?.name !== undefined) s += `,"key_name":${str(key.name)}`;
  if (key?.workspace_id !== undefined) s += `,"workspace_id":${str(key.workspace_id)}`;
  if (key?.organisation_id !== undefined) s += `,"organisation_id":${str(key.organisation_id)}`;
  return s + '}\n';
}

/**
 * The status logged for a request whose client went away before its response was complete (nginx's
 * "client closed request"): what was set on the response so far (200 for a started stream) is not
 * what the client got. `client_aborted` is written too; the metrics count it as outcome `cancelled`.
 */
const CLIENT_CLOSED = '499';

/** A line with every field, for the start-up check that pino would write the same bytes. */
const PROBE: RequestLogSource = {
  traceId: 'a"b\\c\n',
  req: { method: 'POST', url: '/v1/chat/completions?x=1' },
  res: { statusCode: 502 },
  settings: { metadata: { team: 'a"b', n: 1, ok: true, none: null } },
  prompt: { id: 'p"1', slug: 's\\1', version_id: 'v1' },
  ctx: {
    request: { stream: true, body: { model: 'm"1', messages: [] } },
    outcome: {
      attempts: 2,
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      cost: 0.000012345,
      hooks: { before: [{ id: 'h"1', verdict: false, deny: true, feedback: { value: -1, weight: 2 } }], after: [{ id: 'h2', verdict: true, deny: false }] },
    },
  },
  meta: { provider: 'openai', target: 'config.targets[0]', cacheStatus: 'MISS', paramsMapped: 'temperature=1.6->1' },
  error: { code: 'upstream_error', status: 502, message: 'm' },
  clientAborted: true,
  gatewayKey: { name: 'k', workspace_id: 'w"1', organisation_id: 'o' },
};

/**
 * The request-line writer for `logger`. The level is checked on every call (a property read and a
 * compare), so `logger.level = ...` at run time takes effect at once. The line is written to the
 * logger's destination stream (pino.symbols is pino's integration API).
 *
 * Throws when pino would write the line differently for this logger (a child logger's bindings,
 * formatters, serializers, redaction, a nested key, another timestamp, a mixin or a stream-write hook)
 * or when the stream wants pino's per-line metadata (multistream). `createLogger` makes none of these.
 */
export function requestLogWriter(logger: Logger): RequestLogWriter {
  const internals = logger as unknown as Record<symbol, unknown>;
  const { streamSym, asJsonSym, timeSym, mixinSym, hooksSym, needsMetadataGsym } = pino.symbols;
  const stream = internals[streamSym] as { write(line: string): unknown; [needsMetadataGsym]?: boolean };
  const asJson = internals[asJsonSym] as (obj: object, msg: undefined, level: number, time: string) => string;
  const line = requestLine(PROBE, 1.5);
  // The same fields in the same order (JSON.parse keeps it), as pino would be given them.
  const { level: _level, time, ...fields } = JSON.parse(line) as Record<string, unknown>;
  const hooks = internals[hooksSym] as { streamWrite?: unknown } | undefined;
  if (
    asJson.call(logger, fields, undefined, 30, `,"time":${String(time)}`) !== line ||
    internals[timeSym] !== pino.stdTimeFunctions.epochTime ||
    internals[mixinSym] ||
    hooks?.streamWrite ||
    stream[needsMetadataGsym] === true
  ) {
    throw new Error("request log: the logger must write pino's default line format (as createLogger makes it)");
  }
  return (ex, latencyMs) => {
    if (logger.isLevelEnabled('info')) stream.write(requestLine(ex, latencyMs));
  };
}
