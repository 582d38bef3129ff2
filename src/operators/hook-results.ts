import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { hookResultsBody, type HookAccount } from '../checks/hooks.js';
import { appendHookResults, hookResultsJson } from '../checks/hook-results-json.js';
import type { GatewayEvent } from '../upstream/events.js';

/** The part of a request's context this stage reads: the pipeline's RequestContext is one. */
export interface HookResultsSource {
  hooks?: HookAccount;
}

/** A cached answer is replayed as its text only (`body` undefined): parsed here when hooks ran on its request. */
function parseRaw(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function hasMembers(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/**
 * When any hook ran, the answer says so: a JSON answer gains `hook_results` (input guardrails and
 * before hooks under `before_request_hooks`, output guardrails and after hooks under
 * `after_request_hooks`) and becomes a 246 when a check failed without deny; a stream ends with a
 * `: hook_results {...}` SSE comment before `[DONE]` (its status, sent with the first chunk, stays
 * 200). Off under `strict_vendor_compliance`, which sends only OpenAI's fields. Read at the end of
 * the answer, so results of hooks that ran on the stream's end are in it.
 */
export function hookResults(ctx: HookResultsSource, strict: boolean): MonoTypeOperatorFunction<GatewayEvent> {
  if (strict) return (s) => s;
  return (source) =>
    new Observable<GatewayEvent>((subscriber) => {
      let streaming = false;
      return source.subscribe({
        next(ev) {
          if (ev.type === 'stream-start') streaming = true;
          const account = ctx.hooks;
          if (ev.type !== 'json' || !account) return subscriber.next(ev);
          const parsed = ev.body === undefined && ev.raw !== undefined ? parseRaw(ev.raw) : ev.body;
          const body = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
          if (!body) return subscriber.next(ev);
          const status = account.failed && ev.status >= 200 && ev.status < 300 ? 246 : ev.status;
          // The provider's text is kept as it came, the results spliced in before its closing brace
          // (no re-serialisation of the whole answer, no copy of the parsed one: the event then
          // carries the text only, as a cache replay does), unless it already names hook_results.
          const end = ev.raw === undefined || 'hook_results' in body ? -1 : ev.raw.lastIndexOf('}');
          let next: GatewayEvent;
          if (end > 0) {
            const raw = appendHookResults(ev.raw!.slice(0, end), account, hasMembers(body) ? 'next' : 'first', true);
            next = { type: 'json', status, body: undefined, raw, meta: ev.meta, usage: ev.usage };
          } else next = { type: 'json', status, body: { ...body, hook_results: hookResultsBody(account) }, raw: undefined, meta: ev.meta, usage: ev.usage };
          subscriber.next(next);
        },
        error: (e: unknown) => subscriber.error(e),
        complete() {
          const account = ctx.hooks;
          // A JSON answer was decorated above; a stream's results close it.
          if (account && streaming) subscriber.next({ type: 'chunk', data: `hook_results ${hookResultsJson(account)}`, comment: true });
          subscriber.complete();
        },
      });
    });
}
