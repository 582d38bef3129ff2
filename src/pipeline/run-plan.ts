import type { Observable } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import type { PlanNode } from '../plan/types.js';
import { callTarget } from './call-target.js';
import type { PipelineDeps, RequestContext } from './context.js';
import type { GatewayEvent } from './events.js';

/** Plan → Observable. The node kind picks the operator; the order of stages is written here once. */
export function runPlan(node: PlanNode, ctx: RequestContext, deps: PipelineDeps): Observable<GatewayEvent> {
  switch (node.kind) {
    case 'target':
      return callTarget(node, ctx, deps);
    case 'single':
      return runPlan(node.children[0]!, ctx, deps);
    default:
      throw new GatewayError('invalid_config', `Strategy "${node.kind}" at ${node.path} is validated but not yet executed by this gateway version.`, {
        param: `${node.path}.strategy.mode`,
      });
  }
}
