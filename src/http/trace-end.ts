import { maxTokensOf } from '../metrics/answer-facts.js';
import type { Endpoint } from '../config/wire.js';
import type { RequestEnd } from '../metrics/tracing.js';
import type { HookLogEntry, RequestLogOutcome, RequestLogSource } from './request-log.js';

type Answerer = { readonly provider: string; readonly target: string; readonly cacheStatus?: string };

/** What the request's end is read from: the log line's source (an `Exchange`) with a little more of its context. */
export interface TraceEndSource extends Omit<RequestLogSource, 'ctx'> {
  readonly ctx:
    | {
        readonly request: { readonly endpoint: Endpoint; readonly stream: boolean; readonly body?: Record<string, unknown> | undefined };
        readonly outcome: RequestLogOutcome & { readonly cacheStatus?: string | undefined; readonly failed?: Answerer | undefined };
      }
    | undefined;
}

/** The worst verdict of the request's hooks and guardrails: deny, else fail, else pass; none ran: undefined. */
function hookVerdict(hooks: { readonly before: readonly HookLogEntry[]; readonly after: readonly HookLogEntry[] }): RequestEnd['hookVerdict'] {
  let verdict: RequestEnd['hookVerdict'];
  for (const list of [hooks.before, hooks.after]) {
    for (const h of list) {
      if (h.deny) return 'deny';
      verdict = !h.verdict ? 'fail' : (verdict ?? 'pass');
    }
  }
  return verdict;
}

/**
 * What the request's span is told when its response closes: read from the exchange as the log line
 * is (of the body only `model` and the output-token cap). Called only when tracing is on.
 */
export function requestEnd(ex: TraceEndSource): RequestEnd {
  const { req, ctx, meta, error } = ex;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const e: RequestEnd = {
    method: req.method ?? 'GET',
    path: q < 0 ? url : url.slice(0, q),
    status: ex.clientAborted ? 499 : ex.res.statusCode,
    clientAborted: ex.clientAborted,
  };
  if (ctx) {
    const body = ctx.request.body;
    e.endpoint = ctx.request.endpoint;
    e.stream = ctx.request.stream;
    if (typeof body?.model === 'string') e.model = body.model;
    e.maxTokens = maxTokensOf(body);
    e.attempts = ctx.outcome.attempts;
    e.usage = ctx.outcome.usage;
    e.cacheStatus = ctx.outcome.cacheStatus;
    if (ctx.outcome.hooks) e.hookVerdict = hookVerdict(ctx.outcome.hooks);
  }
  const answered = meta ?? ctx?.outcome.failed;
  if (answered) {
    e.provider = answered.provider;
    e.target = answered.target;
    if (answered.cacheStatus) e.cacheStatus = answered.cacheStatus;
  }
  if (error) e.errorCode = error.code;
  return e;
}
