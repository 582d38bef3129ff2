import { of, throwError } from 'rxjs';
import { accounting, type Ledger } from '../operators/accounting.js';
import { hookResults } from '../operators/hook-results.js';
import { usageLimit, type UsageLimitOptions } from '../operators/usage-limit.js';
import { hooksOf } from '../plan/hooks.js';
import type { PlanNode } from '../plan/types.js';
import type { RequestOutcome } from './outcome.js';
import { after, type Run, type Stage } from './stage.js';
import { storedResponses, type ResponsesDeps } from './response-stage.js';
import { backgroundStage } from './background-stage.js';

/**
 * The request-level stages the composition root wires in (src/gateway.ts); absent, a stage is left
 * out (an app built without usage limits or a ledger, as some tests and benchmarks build it).
 */
export interface Stages {
  /** The usage-limits service the admission stage asks (src/operators/usage-limit.ts): reserve, or 412. */
  usageLimits?: UsageLimitOptions['limits'];
  /** Prices the answer and counts it when it ends (settles the usage-limit reservations). */
  ledger?: Ledger<RequestOutcome>;
  /** Stored responses (the Responses endpoint's `store`, `previous_response_id`, `background`). */
  responses?: ResponsesDeps;
}

/** What a request's stages are built with: the request-level stages and the compiled plan. */
export interface RequestEnv extends Stages {
  /** The plan node compiled with its own stages (src/pipeline/plan-stages.ts). */
  plan(node: PlanNode): Run;
}

/** Does any level of the plan run a hook or guardrail? (Only then can an answer carry hook results.) */
function hasHooks(node: PlanNode): boolean {
  const h = hooksOf(node);
  if (h.input_guardrails.length + h.before_request_hooks.length + h.output_guardrails.length + h.after_request_hooks.length > 0) return true;
  return node.kind !== 'target' && node.children.some(hasHooks);
}

/**
 * The stages of one request around its plan, in the order the request and then its answer pass
 * them; compiled once per plan (the root node). An error in any stage travels down the error
 * channel: before the first event it is a JSON error response, after it an SSE error event.
 */
export const REQUEST_STAGES: readonly Stage<PlanNode, RequestEnv>[] = [
  { name: 'stored responses', declared: (_plan, env) => env.responses !== undefined, wrap: (_plan, env) => storedResponses(env.responses!) },
  {
    name: 'usage limit',
    declared: (_plan, env) => env.usageLimits !== undefined,
    wrap: (_plan, env) => {
      const limits = env.usageLimits!;
      const admit = usageLimit<RequestOutcome>({ limits });
      // Policies come and go at run time: while none is active, a request passes with nothing made.
      return (inner) => (ctx) => (limits.idle() ? inner(ctx) : after(admit(of(ctx.outcome)), inner, ctx));
    },
  },
  {
    name: 'background',
    declared: (_plan, env) => env.responses !== undefined,
    wrap: (_plan, env) => backgroundStage(env.usageLimits),
  },
  {
    name: 'plan',
    core: (plan, env) => {
      const run = env.plan(plan);
      return (ctx) => {
        try {
          return run(ctx);
        } catch (e) {
          // still through accounting: its ledger releases what the request reserved
          return throwError(() => e);
        }
      };
    },
  },
  { name: 'accounting', wrap: (_plan, env) => (inner) => (ctx) => inner(ctx).pipe(accounting({ account: ctx.outcome, ledger: env.ledger })) },
  {
    name: 'hook results',
    declared: (plan) => plan.settings.strict_vendor_compliance !== true && hasHooks(plan),
    wrap: () => (inner) => (ctx) => inner(ctx).pipe(hookResults({ outcome: ctx.outcome })),
  },
];
