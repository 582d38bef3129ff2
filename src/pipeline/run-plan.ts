import type { Observable } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import { circuitOpenError } from '../operators/circuit-breaker.js';
import { conditional } from '../operators/conditional.js';
import { fallback, type PassOver } from '../operators/fallback.js';
import { noTargetCanServe, TargetCannotServe } from '../errors/cannot-serve.js';
import { loadbalance, type Weighted } from '../operators/loadbalance.js';
import type { AttemptVerdict } from '../operators/measure-latency.js';
import { LatencyBoard } from '../state/latency-board.js';
import { race } from '../operators/race.js';
import { compileQuery } from '../plan/query.js';
import type { PlanNode, StrategyNode } from '../plan/types.js';
import { targetIdentity } from '../plan/identity.js';
import type { HookStageDeps } from '../operators/request-hooks.js';
import type { PipelineDeps, RequestContext } from './context.js';
import type { GatewayEvent } from '../upstream/events.js';
import { NODE_STAGES, type PlanEnv } from './plan-stages.js';
import { compose, type Run } from './stage.js';
import { policyOf } from './target-stages.js';

export type { Run } from './stage.js';

/**
 * A target whose translator refused the request was never asked: fallback and loadbalance move on
 * whatever their status codes say, and only when no target can serve is the refusal the answer.
 */
const PASS_OVER: PassOver = {
  test: (err) => err instanceof TargetCannotServe,
  none: (errors) => noTargetCanServe(errors as TargetCannotServe[]),
};

function shouldFallBack(codes: readonly number[] | undefined) {
  return (err: unknown): boolean => {
    if (!(err instanceof GatewayError)) return false;
    if (err.code === 'circuit_open' || !codes || codes.length === 0) return true;
    return codes.includes(err.status);
  };
}

/** Errors that say the target is slow or down: a least_latency sample of at least the penalty. */
const TARGET_FAILURES: ReadonlySet<string> = new Set([
  'upstream_unreachable',
  'upstream_invalid_response',
  'upstream_response_too_large',
  'stream_interrupted',
  'request_timeout',
  'upstream_timeout',
]);

/**
 * What an error says of the latency of the target that gave it (least_latency): a failure of the
 * target (an upstream 5xx, 408 or 429, transport, timeout) is a penalty sample; another upstream
 * status is an answer like any other; the gateway's own refusals (an open circuit, a target that
 * cannot serve, a guardrail, a limit) leave no sample, since the target was not asked or not timed.
 */
function latencyVerdict(err: unknown): AttemptVerdict {
  if (err instanceof TargetCannotServe) return 'none';
  if (!(err instanceof GatewayError)) return 'failure';
  if (TARGET_FAILURES.has(err.code)) return 'failure';
  if (err.code !== 'upstream_error') return 'none';
  return err.status >= 500 || err.status === 408 || err.status === 429 ? 'failure' : 'answer';
}

/**
 * Plan → a function from a request's context to its Observable of events, composed once per plan
 * node from its stage list (src/pipeline/plan-stages.ts) and kept per plan node object (plans are
 * cached by the resolver). Everything derived from the config (breaker policy, retry operator, metric
 * labels, compiled conditions, the cache's identity, the children) is built then; a request only
 * creates its Observables.
 */
export class PlanRunner implements PlanEnv {
  private readonly compiled = new WeakMap<PlanNode, Run>();

  constructor(readonly deps: PipelineDeps) {}

  run(plan: PlanNode, ctx: RequestContext): Observable<GatewayEvent> {
    return this.compile(plan)(ctx);
  }

  compile(node: PlanNode): Run {
    let run = this.compiled.get(node);
    if (!run) {
      run = compose(NODE_STAGES, node, this);
      this.compiled.set(node, run);
    }
    return run;
  }

  hookDeps(): HookStageDeps {
    const h = this.deps.hooks;
    if (!h) throw new Error('a plan with hooks or guardrails needs PipelineDeps.hooks');
    return h;
  }

  /** Can this node serve now? A target whose circuit is open cannot; a strategy can if any child can. */
  private retryAfterIfClosed(node: PlanNode): number {
    const deps = this.deps;
    if (node.kind === 'target') {
      const policy = policyOf(node);
      if (!policy) return 0;
      const a = deps.breakers.peek(targetIdentity(node), deps.now(), policy);
      return a.kind === 'open' ? a.retryAfterMs : 0;
    }
    let min = Infinity;
    for (const c of node.children) {
      // A loadbalance never picks a weight-0 child: it cannot make the node able to serve.
      if (node.kind === 'loadbalance' && c.weight <= 0) continue;
      const r = this.retryAfterIfClosed(c);
      if (r === 0) return 0;
      min = Math.min(min, r);
    }
    return min;
  }

  strategy(node: StrategyNode): Run {
    const deps = this.deps;
    const children = node.children.map((c) => this.compile(c));
    switch (node.kind) {
      case 'single':
        return children[0]!;
      case 'fallback': {
        const fallBack = shouldFallBack(node.on_status_codes);
        const onFallback = (i: number): void =>
          deps.telemetry.fallback(node.name ?? node.path, node.children[i]!.name ?? node.children[i]!.path);
        return fallback({ children, shouldFallBack: fallBack, onFallback, passOver: PASS_OVER });
      }
      case 'loadbalance': {
        const weighted: Weighted<GatewayEvent, RequestContext>[] = node.children.map((c, i) => ({
          weight: c.weight,
          eligible: () => this.retryAfterIfClosed(c) === 0,
          run: children[i]!,
        }));
        const none = (): Error => circuitOpenError(this.retryAfterIfClosed(node));
        // The latency board lives with the compiled node: per plan node, per process.
        const leastLatency =
          node.algorithm === 'least_latency' ? { board: new LatencyBoard(weighted.length), now: deps.now, classify: latencyVerdict } : undefined;
        return loadbalance({ children: weighted, random: deps.random, noneEligible: none, passOver: PASS_OVER, ...(leastLatency ? { leastLatency } : {}) });
      }
      case 'conditional': {
        const indexOf = (name: string): number => node.children.findIndex((ch) => ch.name === name);
        const conds = node.conditions ?? [];
        const preds = conds.map((q, i) => compileQuery(q.query, `${node.path}.strategy.conditions[${i}].query`));
        const targets = conds.map((q) => indexOf(q.then));
        const defaultIndex = indexOf(node.default!);
        const pick = (ctx: RequestContext): number => {
          const input = { metadata: ctx.metadata, params: ctx.request.body, url: { pathname: ctx.pathname } };
          for (let i = 0; i < preds.length; i++) if (preds[i]!(input)) return targets[i]!;
          return defaultIndex;
        };
        return conditional({ children, pick });
      }
      case 'race': {
        return race({ children, hedgeAfterMs: node.hedge_after_ms ?? 0, scheduler: deps.scheduler });
      }
    }
  }
}
