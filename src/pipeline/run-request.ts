import type { Observable } from 'rxjs';
import type { PlanNode } from '../plan/types.js';
import type { GatewayEvent } from '../upstream/events.js';
import type { RequestContext } from './context.js';
import { REQUEST_STAGES, type RequestEnv, type Stages } from './request-stages.js';
import type { PlanRunner } from './run-plan.js';
import { compose, type Run } from './stage.js';

export type { Stages } from './request-stages.js';

/**
 * The pipeline's entry: a parsed, authenticated request (its context, plan set, made by the edge)
 * → its answer's events. The request's stages around its plan (src/pipeline/request-stages.ts) are
 * composed once per plan and kept per plan node object (plans are cached by the resolver).
 */
export class RequestRunner {
  private readonly compiled = new WeakMap<PlanNode, Run>();
  private readonly env: RequestEnv;

  constructor(plans: PlanRunner, stages: Stages = {}) {
    this.env = { ...stages, plan: (node) => plans.compile(node) };
  }

  /** The request's answer: cold, one upstream call (or cache lookup) per subscription. */
  run(ctx: RequestContext): Observable<GatewayEvent> {
    const plan = ctx.plan!;
    let run = this.compiled.get(plan);
    if (!run) {
      run = compose(REQUEST_STAGES, plan, this.env);
      this.compiled.set(plan, run);
    }
    return run(ctx);
  }
}
