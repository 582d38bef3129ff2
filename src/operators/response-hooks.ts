import { defer, EMPTY, from, identity, mergeMap, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import { chunkEvent, chunksToJson, jsonToChunks } from '../cache/assemble.js';
import { runInTurn, type HookRun, type HookSpec } from '../checks/hooks.js';
import { responseInput } from '../checks/text.js';
import type { CheckEndpoint, CheckInput } from '../checks/types.js';
import type { AnswerMeta, GatewayEvent } from '../upstream/events.js';
import { memoByObject } from '../util/memo.js';
import { andThen, inOrder, later, type NowOrLater } from '../util/now-or-later.js';
import { accountOf, runInBackground, takeResult, type HookedRequest, type HookStageDeps } from './request-hooks.js';

type JsonEvent = Extract<GatewayEvent, { type: 'json' }>;
type StreamStart = Extract<GatewayEvent, { type: 'stream-start' }>;

export interface ResponseHooksOptions {
  /** The target's hooks: output guardrails then after hooks (own or inherited), compiled with the plan. */
  hooks: readonly HookSpec[];
  /** The target's JSON path, written into each result. */
  target: string;
  deps: HookStageDeps;
  /** The request's outcome: the hooks read its request, their results go to its account. */
  outcome: HookedRequest;
}

/** One answer's hooks, sorted. */
interface AnswerStage {
  sync: readonly HookSpec[];
  background: readonly HookSpec[];
  /** A sync hook may deny: a stream is held until its checks are done. */
  hold: boolean;
  target: string;
  deps: HookStageDeps;
  outcome: HookedRequest;
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
 */
export function responseHooks(o: ResponseHooksOptions): MonoTypeOperatorFunction<GatewayEvent> {
  const endpoint = o.outcome.request.endpoint;
  // Embeddings and model lists carry no text to check.
  if (o.hooks.length === 0 || endpoint === 'models' || endpoint === 'embeddings') return identity;
  const { sync, background, hold } = sorted(o.hooks);
  const stage: AnswerStage = { sync, background, hold, target: o.target, deps: o.deps, outcome: o.outcome };
  return (source) =>
    defer(() => {
      const stream = new StreamSeen(endpoint as CheckEndpoint, stage.hold);
      return source.pipe(
        inOrder(
          (ev) => {
            stream.see(ev);
            if (ev.type === 'json') return checkedJson(stage, ev);
            return stage.hold ? undefined : ev;
          },
          () => (stream.seen ? checkedStream(stage, stream) : undefined),
        ),
      );
    });
}

/** A target's hooks sorted once (the list is made once per plan node, src/pipeline/plan-stages.ts). */
const sorted = memoByObject((hooks: readonly HookSpec[]): Pick<AnswerStage, 'sync' | 'background' | 'hold'> => {
  const sync = hooks.filter((h) => !h.async);
  return { sync, background: hooks.filter((h) => h.async), hold: sync.some((h) => h.denyOnFail || h.denyOnSuccess) };
});

/** The check input of an answer: the request as it was sent, the answer's body and texts. */
function answerInput(ctx: HookedRequest, body: unknown, status: number): CheckInput {
  const req = ctx.request;
  return responseInput({ endpoint: req.endpoint as CheckEndpoint, body: req.body, metadata: ctx.metadata, headers: req.headers, traceId: ctx.traceId, response: { body, status } });
}

/**
 * The answer's body after the sync hooks (a mutator's), each result taken into the account with the
 * target; a denial is the 446, a failure without deny marks `meta`. The async hooks then run on it.
 */
function checked(stage: AnswerStage, body: unknown, status: number, meta: AnswerMeta): NowOrLater<unknown> {
  const take = (h: HookSpec, run: HookRun): void => {
    const result = run.result; // made for this run: named with the target in place, not copied
    result.target = stage.target;
    takeResult(stage.deps.telemetry, accountOf(stage.outcome), 'after', h.list, result);
    if (!result.verdict) meta.hooksFailed = true;
  };
  return andThen(runInTurn(stage.sync, answerInput(stage.outcome, body, status), stage.deps.checks, take), (after) => {
    const final = after.response!.body;
    inBackground(stage, final, status);
    return final;
  });
}

/** Async hooks on the final answer, after it was sent: measured and logged, never changing it. */
function inBackground(stage: AnswerStage, body: unknown, status: number): void {
  if (stage.background.length > 0) runInBackground(stage.background, answerInput(stage.outcome, body, status), stage.deps, stage.outcome.traceId, 'response', stage.target);
}

/** A JSON answer checked: the event to send (the mutated body, when a mutator changed it). An error answer is not checked. */
function checkedJson(stage: AnswerStage, ev: JsonEvent): NowOrLater<GatewayEvent> {
  if (ev.status < 200 || ev.status >= 300 || stage.sync.length === 0) {
    inBackground(stage, ev.body, ev.status);
    return ev;
  }
  return andThen(checked(stage, ev.body, ev.status, ev.meta), (body): GatewayEvent =>
    body === ev.body ? ev : { type: 'json', status: ev.status, body, meta: ev.meta, ...(ev.usage ? { usage: ev.usage } : {}) },
  );
}

/** A stream's events as they passed: its start, its parsed chunks, and, when held, every event (for the replay). */
class StreamSeen {
  start: StreamStart | undefined;
  readonly chunks: Record<string, unknown>[] = [];
  readonly events: GatewayEvent[] = [];
  seen = false;

  constructor(
    readonly endpoint: CheckEndpoint,
    private readonly hold: boolean,
  ) {}

  see(ev: GatewayEvent): void {
    if (ev.type === 'json') return;
    this.seen = true;
    if (this.hold) this.events.push(ev);
    if (ev.type === 'stream-start') this.start = ev;
    else if (ev.data !== '') {
      try {
        this.chunks.push(JSON.parse(ev.data) as Record<string, unknown>);
      } catch {
        // not a JSON chunk: nothing to assemble from it
      }
    }
  }
}

/**
 * A stream's hooks at its end, on the assembled answer. A held stream is then sent: replayed as it
 * came, or as the mutated answer's chunks.
 */
function checkedStream(stage: AnswerStage, s: StreamSeen): Observable<GatewayEvent> {
  const assembled = chunksToJson(s.endpoint, s.chunks as never);
  // A stream's events start with stream-start; the fallback only keeps the types honest.
  const meta = s.start?.meta ?? { provider: '', target: stage.target, retries: 0 };
  return later(checked(stage, assembled, 200, meta)).pipe(
    mergeMap((body): Observable<GatewayEvent> => {
      if (!stage.hold) return EMPTY;
      if (body === assembled) return from(s.events);
      const chunks = jsonToChunks(s.endpoint, body as never).map((c): GatewayEvent => chunkEvent(s.endpoint, JSON.stringify(c)));
      return from([s.start!, ...chunks]);
    }),
  );
}
