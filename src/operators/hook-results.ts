import { defer, identity, of, type MonoTypeOperatorFunction } from 'rxjs';
import { hookResultsBody, type HookAccount } from '../checks/hooks.js';
import type { GatewayEvent } from '../upstream/events.js';
import { inOrder } from '../util/now-or-later.js';

type JsonEvent = Extract<GatewayEvent, { type: 'json' }>;

/** The part of a request this stage reads: the account of its hooks. The pipeline's RequestOutcome (src/pipeline/outcome.ts) is one. */
export interface HookResultsSource {
  hooks?: HookAccount;
}

export interface HookResultsOptions {
  /** The request's outcome, whose hook account is read at the end of the answer. */
  outcome: HookResultsSource;
  /** `strict_vendor_compliance`: only OpenAI's fields are sent, so no `hook_results`. */
  strict?: boolean;
}

/**
 * When any hook ran, the answer says so: a JSON answer gains `hook_results` (input guardrails and
 * before hooks under `before_request_hooks`, output guardrails and after hooks under
 * `after_request_hooks`) and becomes a 246 when a check failed without deny; a stream ends with a
 * `: hook_results {...}` SSE comment before `[DONE]` (its status, sent with the first chunk, stays
 * 200). Off under `strict_vendor_compliance`, which sends only OpenAI's fields. Read at the end of
 * the answer, so results of hooks that ran on the stream's end are in it.
 */
export function hookResults({ outcome, strict = false }: HookResultsOptions): MonoTypeOperatorFunction<GatewayEvent> {
  if (strict) return identity;
  return (source) =>
    defer(() => {
      let streaming = false;
      return source.pipe(
        inOrder(
          (ev) => {
            if (ev.type === 'stream-start') streaming = true;
            return ev.type === 'json' && outcome.hooks ? decorated(ev, outcome.hooks) : ev;
          },
          () => (outcome.hooks && streaming ? of(closingComment(outcome.hooks)) : undefined),
        ),
      );
    });
}

/**
 * A JSON answer with `hook_results` in its body (a 246 when a check failed without deny). The body
 * is a plain object from here on: the response writer serialises it (the provider's text is dropped).
 */
function decorated(ev: JsonEvent, account: HookAccount): GatewayEvent {
  // A cached answer is replayed as its text only (`body` undefined): parsed here.
  const parsed = ev.body === undefined && ev.raw !== undefined ? parseRaw(ev.raw) : ev.body;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return ev;
  const status = account.failed && ev.status >= 200 && ev.status < 300 ? 246 : ev.status;
  // Written out (the event without `raw`): its fields are few and known.
  const out: JsonEvent = { type: 'json', status, body: { ...parsed, hook_results: hookResultsBody(account) }, meta: ev.meta };
  if (ev.usage) out.usage = ev.usage;
  return out;
}

function parseRaw(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** A stream's closing SSE comment: `hook_results` and the results as JSON. */
function closingComment(account: HookAccount): GatewayEvent {
  return { type: 'chunk', data: `hook_results ${JSON.stringify(hookResultsBody(account))}`, comment: true };
}
