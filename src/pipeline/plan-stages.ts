import type { HookStageDeps } from '../operators/request-hooks.js';
import { hooksOf } from '../plan/hooks.js';
import type { PlanNode, StrategyNode, TargetNode } from '../plan/types.js';
import { callTarget } from './call-target.js';
import type { PipelineDeps } from './context.js';
import { cacheStage, hookGate } from './node-stages.js';
import { compose, type Run, type Stage } from './stage.js';
import { answerHooksStage, breakerStage, policyOf, retryStage, strictStage } from './target-stages.js';

/** What a plan node's stages are built with (the PlanRunner, src/pipeline/run-plan.ts). */
export interface PlanEnv {
  readonly deps: PipelineDeps;
  /** The hook stages' deps; throws when a plan with hooks meets a pipeline built without them. */
  hookDeps(): HookStageDeps;
  /** A strategy over its children, each compiled with its own stages. */
  strategy(node: StrategyNode): Run;
}

const declares = (node: PlanNode, list: 'input_guardrails' | 'before_request_hooks'): boolean =>
  node.declares.includes(list) && hooksOf(node)[list].length > 0;

/** Output guardrails then after hooks of a target, own or inherited. */
const answerHooks = (node: TargetNode) => [...hooksOf(node).output_guardrails, ...hooksOf(node).after_request_hooks];

/**
 * The stages of one target, in the order its answer passes them: the call (translate → prepare →
 * call → decode → attempt timeout → measure, src/pipeline/call-target.ts), then each stage around it.
 */
export const TARGET_STAGES: readonly Stage<TargetNode, PlanEnv>[] = [
  { name: 'call', core: (node, env) => (ctx) => callTarget(node, ctx, env.deps) },
  { name: 'output guardrails → after hooks', declared: (node) => answerHooks(node).length > 0, wrap: (node, env) => answerHooksStage(answerHooks(node), node, env.hookDeps()) },
  { name: 'retry', declared: (node) => (node.settings.retry?.attempts ?? 0) > 0, wrap: (node, env) => retryStage(node, env.deps) },
  { name: 'circuit breaker', declared: (node) => policyOf(node) !== undefined, wrap: (node, env) => breakerStage(node, env.deps) },
  { name: 'strict mode', declared: (node) => node.settings.strict_vendor_compliance === true, wrap: () => strictStage() },
];

/**
 * The stages of one plan node (each config level), in the order the request passes them. Each wraps
 * the node at the config level that declares it; children inherit the settings without running them
 * again (output guardrails and after hooks run per target, above).
 */
export const NODE_STAGES: readonly Stage<PlanNode, PlanEnv>[] = [
  { name: 'input guardrails', declared: (node) => declares(node, 'input_guardrails'), wrap: (node, env) => hookGate(hooksOf(node).input_guardrails, env.hookDeps()) },
  { name: 'before hooks', declared: (node) => declares(node, 'before_request_hooks'), wrap: (node, env) => hookGate(hooksOf(node).before_request_hooks, env.hookDeps()) },
  {
    name: 'cache',
    declared: (node, env) => node.settings.cache !== undefined && env.deps.cache !== undefined && node.declares.includes('cache'),
    wrap: (node, env) => cacheStage(node, env.deps),
  },
  { name: 'strategy or target', core: (node, env) => (node.kind === 'target' ? compose(TARGET_STAGES, node, env) : env.strategy(node)) },
];
