import { defer, identity, map, Observable, switchMap, throwError, type MonoTypeOperatorFunction } from 'rxjs';
import { accounting, type Ledger } from '../operators/accounting.js';
import { hookResults } from '../operators/hook-results.js';
import type { PlanNode } from '../plan/types.js';
import type { GatewayEvent } from '../upstream/events.js';
import type { RequestContext } from './context.js';
import type { PlanRunner } from './run-plan.js';

/**
 * What the edge (src/http) knows how to do with one incoming request of type `I`. The pipeline says
 * when each step runs; the edge says how, so no HTTP type reaches this layer.
 */
export interface RequestEdge<I> {
  /** The gateway key: throws 401 when missing or unknown. */
  authenticate(input: I): void;
  /** x-gateway-* headers and x-gateway-config → the plan (cached): throws 400/404. */
  resolve(input: I): PlanNode;
  /** The request body as parsed JSON, or undefined for a body-less endpoint: errors 400/413/415. */
  readBody(input: I): Observable<unknown> | undefined;
  /**
   * The plan's prompt template rendered into the raw body (pipeline/prompt.ts), looked up in the
   * scope of the input's gateway key: throws 400 for an unknown prompt or a missing variable. Without
   * a prompt the body is kept (a `variables` field is refused).
   */
  renderPrompt(input: I, plan: PlanNode, raw: unknown): unknown;
  /** The (rendered) body, validated here, and the plan → the request's context, `plan` set (throws 400 on an invalid body). */
  context(input: I, plan: PlanNode, body: unknown): RequestContext;
}

/** A stage over the request before the plan runs (it may change or refuse the request). */
export type RequestStage = MonoTypeOperatorFunction<RequestContext>;

/**
 * The request-level stages the composition root wires in (src/gateway.ts). `NO_STAGES` (no usage
 * limits, no ledger) serves an app built without them, as some tests and benchmarks build it.
 */
export interface Stages {
  /** Admission against the usage-limit policies (src/operators/usage-limit.ts): reserve, or 412. */
  usageLimit: RequestStage;
  /** Prices the answer and counts it when it ends (settles the usage-limit reservations). */
  ledger?: Ledger<RequestContext>;
}

export const NO_STAGES: Stages = { usageLimit: identity };

/**
 * The order of every proxied request, written once, as one RxJS composition built at
 * start:
 *
 *   authenticate → resolve config → read body → render prompt → context (validate body) → usage limit
 *     → [input guardrails → before hooks → cache → strategy → per target: output guardrails → after hooks]
 *     → accounting → hook results
 *
 * and the edge's writer subscribes to the result (respond). The bracket is the compiled plan
 * (PlanRunner, src/pipeline/run-plan.ts), where each config level's own stages wrap it in that order:
 * a level's guardrails and hooks run where the config declares them, output guardrails and after hooks
 * on each target's answer (so retry and fallback see a 446). An error in any stage travels down the
 * error channel: before the first event it is a JSON error response, after it an SSE error event.
 */
export function requestPipeline<I>(edge: RequestEdge<I>, runner: PlanRunner, stages: Stages = NO_STAGES): (input: I) => Observable<GatewayEvent> {
  const before = (ctx$: Observable<RequestContext>): Observable<RequestContext> => ctx$.pipe(stages.usageLimit);
  const ledger = stages.ledger;
  const answer = (ctx: RequestContext): Observable<GatewayEvent> => {
    let events: Observable<GatewayEvent>;
    try {
      events = runner.run(ctx.plan!, ctx);
    } catch (e) {
      // still through accounting: its ledger releases what the request reserved
      events = throwError(() => e);
    }
    return events.pipe(accounting(ctx, ledger), hookResults(ctx, ctx.plan!.settings.strict_vendor_compliance === true));
  };
  return (input) =>
    before(
      defer(() => {
        edge.authenticate(input);
        const plan = edge.resolve(input);
        const body = edge.readBody(input);
        // The prompt is rendered before the body is validated: the template may give model and messages.
        const toContext = (raw: unknown): RequestContext => edge.context(input, plan, edge.renderPrompt(input, plan, raw));
        return body
          ? body.pipe(map(toContext))
          : new Observable<RequestContext>((s) => {
              s.next(toContext(undefined));
              s.complete();
            });
      }),
    ).pipe(switchMap(answer));
}
