import { switchMap, take, type Observable } from 'rxjs';
import type { GatewayEvent } from '../upstream/events.js';
import type { RequestContext } from './context.js';

/** A compiled stage list: built once per plan node, called once per request with its context. */
export type Run = (ctx: RequestContext) => Observable<GatewayEvent>;

/** A stage's operator for one plan node: the run inside it → the run with the stage around it. */
export type Wrap = (inner: Run) => Run;

/**
 * One entry of a stage list (src/pipeline/request-stages.ts, src/pipeline/plan-stages.ts): its name
 * (the README's lifecycle picture names the stages in list order), whether the node declares it, and
 * its operator for that node. One entry per list is the core: the stages before it act on the request
 * on its way in, those after it on the answer on its way out.
 */
export type Stage<N, E> =
  | {
      readonly name: string;
      /** Does `node` declare this stage? Absent: every node does. A stage not declared is left out. */
      readonly declared?: (node: N, env: E) => boolean;
      /** The stage's operator for `node`, made once when the node is compiled. */
      readonly wrap: (node: N, env: E) => Wrap;
    }
  | {
      readonly name: string;
      readonly core: (node: N, env: E) => Run;
    };

/**
 * A stage list for `node` → one Run, composed once in reading order: the request enters through the
 * stages before the core in list order (the first is outermost) and the answer leaves through those
 * after it in list order (the last is outermost). A stage the node does not declare is not in the
 * result, so it costs nothing per request.
 */
export function compose<N, E>(stages: readonly Stage<N, E>[], node: N, env: E): Run {
  const at = stages.findIndex((s) => 'core' in s);
  const core = stages[at]!;
  if (!('core' in core)) throw new Error('a stage list has one core');
  const around = [...stages.slice(at + 1), ...stages.slice(0, at).reverse()];
  return around.reduce<Run>((inner, s) => ('core' in s || (s.declared && !s.declared(node, env)) ? inner : s.wrap(node, env)(inner)), core.core(node, env));
}

/**
 * `inner` run on `ctx` once `gate` lets the request through (its first value; its error is the
 * answer's). The gate is subscribed when the answer is, not when it is made (a strategy may make a
 * child's answer and never run it).
 */
export function after(gate: Observable<unknown>, inner: Run, ctx: RequestContext): Observable<GatewayEvent> {
  return gate.pipe(
    take(1),
    switchMap(() => inner(ctx)),
  );
}
