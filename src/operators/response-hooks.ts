import { identity, Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { chunksToJson, jsonToChunks } from '../cache/assemble.js';
import { runHook, runHookSync, runsSync, type HookRun, type HookSpec } from '../checks/hooks.js';
import { responseInput, withBodies } from '../checks/text.js';
import type { CheckEndpoint, CheckInput } from '../checks/types.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';
import { accountOf, runInBackground, takeResult, type HookedRequest, type HookStageDeps } from './request-hooks.js';

/** One target's answer hooks as the answer path uses them, sorted once per plan. */
interface AnswerStage {
  sync: readonly HookSpec[];
  background: readonly HookSpec[];
  /** A sync hook may deny: a stream is held until its checks are done. */
  hold: boolean;
  /** Every sync hook only computes: they run at once, no promise. */
  allSync: boolean;
  /** The target's JSON path, written into each result. */
  target: string;
  deps: HookStageDeps;
}

/** The check input of an answer: the request as it was sent, the answer's body and texts. */
function answerInput(ctx: HookedRequest, body: unknown, status: number): CheckInput {
  const req = ctx.request;
  return responseInput({ endpoint: req.endpoint as CheckEndpoint, body: req.body, metadata: ctx.metadata, headers: req.headers, traceId: ctx.traceId, response: { body, status } });
}

/** One hook's run taken into the account: the (maybe mutated) body; throws the 446. A failure without deny marks `meta`. */
function take(stage: AnswerStage, ctx: HookedRequest, h: HookSpec, run: HookRun, body: unknown, meta: AnswerMeta): unknown {
  const result = run.result;
  result.target = stage.target;
  takeResult(stage.deps.telemetry, accountOf(ctx), 'after', h.list, result);
  if (!result.verdict) meta.hooksFailed = true;
  return run.transformed?.response ? run.transformed.response.body : body;
}

/** The sync hooks on `body`, at once (computation checks only): the (maybe mutated) body; throws the 446. */
function checkNow(stage: AnswerStage, ctx: HookedRequest, body: unknown, status: number, meta: AnswerMeta): unknown {
  let input = answerInput(ctx, body, status);
  for (const h of stage.sync) {
    const next = take(stage, ctx, h, runHookSync(h, input, stage.deps.checks), body, meta);
    if (next !== body) input = withBodies(input, { response: { body: (body = next) } });
  }
  return body;
}

/** `checkNow` for hooks that may wait on I/O; rejects with the 446. */
async function check(stage: AnswerStage, ctx: HookedRequest, body: unknown, status: number, meta: AnswerMeta): Promise<unknown> {
  if (stage.allSync) return checkNow(stage, ctx, body, status, meta);
  let input = answerInput(ctx, body, status);
  for (const h of stage.sync) {
    const next = take(stage, ctx, h, await runHook(h, input, stage.deps.checks), body, meta);
    if (next !== body) input = withBodies(input, { response: { body: (body = next) } });
  }
  return body;
}

/** Async hooks on the final answer, after it was sent: measured and logged, never changing it. */
function inBackground(stage: AnswerStage, ctx: HookedRequest, body: unknown, status: number): void {
  if (stage.background.length > 0) runInBackground(stage.background, answerInput(ctx, body, status), stage.deps, ctx.traceId, 'response', stage.target);
}

/** A JSON answer checked: the event to send (the mutated body, when a mutator changed it). */
function answered(ev: Extract<GatewayEvent, { type: 'json' }>, body: unknown): GatewayEvent {
  return body === ev.body ? ev : { type: 'json', status: ev.status, body, meta: ev.meta, ...(ev.usage ? { usage: ev.usage } : {}) };
}

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
 *
 * Built once per target of a plan; the function it returns makes the operator of one request.
 */
export function responseHooks(hooks: readonly HookSpec[], target: string, deps: HookStageDeps): (ctx: HookedRequest) => MonoTypeOperatorFunction<GatewayEvent> {
  if (hooks.length === 0) return () => identity;
  const sync = hooks.filter((h) => !h.async);
  const stage: AnswerStage = {
    sync,
    background: hooks.filter((h) => h.async),
    hold: sync.some((h) => h.denyOnFail || h.denyOnSuccess),
    allSync: sync.every(runsSync),
    target,
    deps,
  };
  return (ctx) => {
    const endpoint = ctx.request.endpoint;
    // Embeddings and model lists carry no text to check.
    if (endpoint === 'models' || endpoint === 'embeddings') return identity;
    return (source) =>
      new Observable<GatewayEvent>((subscriber) => {
        let closed = false;
        /** A JSON answer's checks are waiting on I/O: they complete the stage, not the source's end. */
        let checking = false;
        // A stream's events and parsed chunks, made on its first event (a JSON answer needs neither).
        let held: GatewayEvent[] | undefined;
        let chunks: Record<string, unknown>[] | undefined;
        let start: Extract<GatewayEvent, { type: 'stream-start' }> | undefined;
        const fail = (e: unknown): void => {
          if (!closed) subscriber.error(e);
        };
        const sub = source.subscribe({
          next(ev) {
            if (ev.type === 'json') {
              if (ev.status < 200 || ev.status >= 300 || sync.length === 0) {
                inBackground(stage, ctx, ev.body, ev.status);
                subscriber.next(ev);
                return;
              }
              if (stage.allSync) {
                let body: unknown;
                try {
                  body = checkNow(stage, ctx, ev.body, ev.status, ev.meta);
                } catch (e) {
                  return fail(e);
                }
                inBackground(stage, ctx, body, ev.status);
                subscriber.next(answered(ev, body));
                subscriber.complete();
                return;
              }
              checking = true;
              check(stage, ctx, ev.body, ev.status, ev.meta).then((body) => {
                if (closed) return;
                inBackground(stage, ctx, body, ev.status);
                subscriber.next(answered(ev, body));
                subscriber.complete();
              }, fail);
              return;
            }
            chunks ??= [];
            if (ev.type === 'stream-start') start = ev;
            else if (ev.data !== '') {
              try {
                chunks.push(JSON.parse(ev.data) as Record<string, unknown>);
              } catch {
                // not a JSON chunk: nothing to assemble from it
              }
            }
            if (stage.hold) (held ??= []).push(ev);
            else subscriber.next(ev);
          },
          error: fail,
          complete() {
            if (chunks === undefined) {
              // No stream: a JSON answer checked at once or passed on ends here; one whose checks
              // wait on I/O completes when they are done (above).
              if (!checking) subscriber.complete();
              return;
            }
            const ep = endpoint as CheckEndpoint;
            const assembled = chunksToJson(ep, chunks as never);
            // A stream's events start with stream-start; the fallback only keeps the types honest.
            check(stage, ctx, assembled, 200, start?.meta ?? { provider: '', target, retries: 0 }).then((body) => {
              if (closed) return;
              inBackground(stage, ctx, body, 200);
              if (stage.hold) {
                if (body === assembled) for (const ev of held!) subscriber.next(ev);
                else {
                  subscriber.next(start!);
                  for (const c of jsonToChunks(ep, body as never)) subscriber.next({ type: 'chunk', data: JSON.stringify(c) });
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
  };
}
