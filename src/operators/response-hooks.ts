import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { chunksToJson, jsonToChunks } from '../cache/assemble.js';
import { runHook, runHookSync, runsSync, type HookRun, type HookSpec } from '../checks/hooks.js';
import { responseInput } from '../checks/text.js';
import type { CheckEndpoint, CheckInput } from '../checks/types.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';
import { accountOf, deniedError, measureHook, type HookedRequest, type HookStageDeps } from './request-hooks.js';

/**
 * An answer stage: output guardrails or after hooks of one target, run on its answer inside the
 * target's retry (so a 446 is an error that retry with `on_status_codes: [446]` and fallback see).
 *
 * - JSON: the sync hooks run on the answer in order; a deny is a 446 whose body never quotes the
 *   answer; a mutator's change replaces the body; a failed check without deny marks the answer 246.
 * - Stream with a deny among the sync hooks: the stream is held, checked whole, then replayed (or
 *   replaced by the mutated answer) or refused with 446: the first byte waits for the whole answer.
 * - Stream without deny: chunks flow as they come; the hooks run on the assembled answer at its end,
 *   their results reach the log, the metrics and the stream's closing `hook_results` comment.
 * - Async hooks run on the final answer after it was sent and never change it.
 * Error answers pass untouched (hooks check answers, not failures).
 */
export function responseHooks(hooks: readonly HookSpec[], ctx: HookedRequest, target: string, deps: HookStageDeps): MonoTypeOperatorFunction<GatewayEvent> {
  const sync = hooks.filter((h) => !h.async);
  const background = hooks.filter((h) => h.async);
  const hold = sync.some((h) => h.denyOnFail || h.denyOnSuccess);
  const req = ctx.request;
  // Embeddings and model lists carry no text to check.
  if (req.endpoint === 'models' || req.endpoint === 'embeddings' || hooks.length === 0) return (s) => s;
  const endpoint = req.endpoint as CheckEndpoint;
  const inputFor = (body: unknown, status: number): CheckInput =>
    responseInput({ endpoint, body: req.body, metadata: ctx.metadata, headers: req.headers, traceId: ctx.traceId, response: { body, status } });

  const allSync = sync.every(runsSync);
  /** One hook's run taken into the account: the (maybe mutated) body; throws the 446. A failure without deny marks `meta`. */
  const take = (h: HookSpec, run: HookRun, body: unknown, meta: AnswerMeta): unknown => {
    const account = accountOf(ctx);
    run.result.target = target;
    account.after.push(run.result);
    measureHook(run.result, h.list, deps.telemetry);
    if (run.result.deny) throw deniedError(account, 'answer');
    if (!run.result.verdict) {
      account.failed = true;
      meta.hooksFailed = true;
    }
    return run.transformed?.response ? run.transformed.response.body : body;
  };
  /** The sync hooks on `body`, at once (computation checks only); throws the 446. */
  const checkNow = (body: unknown, status: number, meta: AnswerMeta): unknown => {
    for (const h of sync) body = take(h, runHookSync(h, inputFor(body, status), deps.checks, (_b, response) => inputFor(response, status)), body, meta);
    return body;
  };
  /** Run the sync hooks on `body`: the (maybe mutated) body; rejects with the 446. */
  const check = async (body: unknown, status: number, meta: AnswerMeta): Promise<unknown> => {
    if (allSync) return checkNow(body, status, meta);
    for (const h of sync) body = take(h, await runHook(h, inputFor(body, status), deps.checks, (_b, response) => inputFor(response, status)), body, meta);
    return body;
  };
  const inBackground = (body: unknown, status: number): void => {
    if (background.length === 0) return;
    const input = inputFor(body, status);
    void Promise.all(background.map((h) => runHook(h, input, deps.checks, (_b, response) => inputFor(response, status)))).then(
      (runs) => {
        runs.forEach((r, i) => measureHook({ ...r.result, deny: false }, background[i]!.list, deps.telemetry));
        deps.onAsync(
          ctx.traceId,
          runs.map((r) => ({ ...r.result, deny: false, target })),
          'response',
        );
      },
      () => undefined,
    );
  };

  return (source) =>
    new Observable<GatewayEvent>((subscriber) => {
      let closed = false;
      const held: GatewayEvent[] = [];
      const chunks: Record<string, unknown>[] = [];
      let start: Extract<GatewayEvent, { type: 'stream-start' }> | undefined;
      const fail = (e: unknown): void => {
        if (!closed) subscriber.error(e);
      };
      const sub = source.subscribe({
        next(ev) {
          if (ev.type === 'json') {
            if (ev.status < 200 || ev.status >= 300 || sync.length === 0) {
              inBackground(ev.body, ev.status);
              subscriber.next(ev);
              return;
            }
            const answer = (body: unknown): void => {
              if (closed) return;
              inBackground(body, ev.status);
              subscriber.next(body === ev.body ? ev : { type: 'json', status: ev.status, body, meta: ev.meta, ...(ev.usage ? { usage: ev.usage } : {}) });
              subscriber.complete();
            };
            if (allSync) {
              let body: unknown;
              try {
                body = checkNow(ev.body, ev.status, ev.meta);
              } catch (e) {
                return fail(e);
              }
              return answer(body);
            }
            check(ev.body, ev.status, ev.meta).then(answer, fail);
            return;
          }
          if (ev.type === 'stream-start') start = ev;
          else if (ev.data !== '') {
            try {
              chunks.push(JSON.parse(ev.data) as Record<string, unknown>);
            } catch {
              // not a JSON chunk: nothing to assemble from it
            }
          }
          if (hold) held.push(ev);
          else subscriber.next(ev);
        },
        error: fail,
        complete() {
          if (!start && held.length === 0 && chunks.length === 0) {
            // a JSON answer completes after its checks, above
            if (sync.length === 0 || closed) subscriber.complete();
            return;
          }
          const assembled = chunksToJson(endpoint, chunks as never);
          // A stream's events start with stream-start; the fallback only keeps the types honest.
          check(assembled, 200, start?.meta ?? { provider: '', target, retries: 0 }).then((body) => {
            if (closed) return;
            inBackground(body, 200);
            if (hold) {
              if (body === assembled) for (const ev of held) subscriber.next(ev);
              else {
                subscriber.next(start!);
                for (const c of jsonToChunks(endpoint, body as never)) subscriber.next({ type: 'chunk', data: JSON.stringify(c) });
              }
            }
            subscriber.complete();
          }, fail);
        },
      });
      return () => {
        closed = true;
        sub.unsubscribe();
      };
    });
}
