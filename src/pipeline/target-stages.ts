import type { HookSpec } from '../checks/hooks.js';
import { circuitBreaker, type CircuitBreakerOptions } from '../operators/circuit-breaker.js';
import type { HookStageDeps } from '../operators/request-hooks.js';
import { responseHooks } from '../operators/response-hooks.js';
import { retryWithBackoff, type RetryOptions } from '../operators/retry.js';
import { strictOpenAI } from '../operators/strict-openai.js';
import type { TargetNode } from '../plan/types.js';
import { targetIdentity } from '../plan/identity.js';
import type { Endpoint } from '../providers/types.js';
import type { BreakerPolicy } from '../state/breaker-store.js';
import type { GatewayEvent } from '../upstream/events.js';
import { targetLabels } from './call-target.js';
import type { PipelineDeps } from './context.js';
import type { Wrap } from './stage.js';

export function policyOf(node: TargetNode): BreakerPolicy | undefined {
  const cb = node.settings.cb_config;
  return cb ? { failureThreshold: cb.failure_threshold, cooldownMs: cb.cooldown_interval } : undefined;
}

/**
 * Output guardrails then after hooks (own or inherited) on this target's answer, inside its retry
 * and breaker: a 446 is an error that retry (on_status_codes: [446]) and fallback see.
 */
export function answerHooksStage(hooks: readonly HookSpec[], node: TargetNode, deps: HookStageDeps): Wrap {
  return (inner) => (ctx) => inner(ctx).pipe(responseHooks({ hooks, target: node.path, deps, outcome: ctx.outcome }));
}

/** Retries within the request's time budget; one operator per endpoint (metric labels differ), made on first use. */
export function retryStage(node: TargetNode, deps: PipelineDeps): Wrap {
  const retry = node.settings.retry!;
  const byEndpoint: Partial<Record<Endpoint, RetryOptions>> = {};
  const retryFor = (endpoint: Endpoint): RetryOptions =>
    (byEndpoint[endpoint] ??= {
      attempts: retry.attempts,
      onStatusCodes: retry.on_status_codes,
      useRetryAfterHeaders: retry.use_retry_after_headers,
      now: deps.now,
      random: deps.random,
      onRetry: () => deps.telemetry.retry(targetLabels(node, endpoint)),
      scheduler: deps.scheduler,
    });
  const budget = deps.requestBudgetMs;
  return (inner) => (ctx) =>
    inner(ctx).pipe(retryWithBackoff<GatewayEvent>({ ...retryFor(ctx.request.endpoint), budgetLeftMs: () => ctx.startedAt + budget - deps.now() }));
}

/** The target's circuit breaker; a refusal names the target (the error response's x-gateway-* headers, log line). */
export function breakerStage(node: TargetNode, deps: PipelineDeps): Wrap {
  const breaker: CircuitBreakerOptions = {
    store: deps.breakers,
    id: targetIdentity(node),
    policy: policyOf(node)!,
    failureStatusCodes: node.settings.cb_config!.failure_status_codes,
    now: deps.now,
    onState: (status, transition) => deps.telemetry.circuit(node.id, status, transition),
  };
  const refused = { provider: deps.registry.get(node.target.provider).descriptor.id, target: node.path, retries: 0 };
  // The state as this process knows it, reported once the breaker exists: its series (and those of
  // its transitions, at 0) are there before the first transition, so rate() sees that one too.
  deps.telemetry.circuit(node.id, deps.breakers.status(breaker.id));
  return (inner) => (ctx) =>
    inner(ctx).pipe(
      circuitBreaker<GatewayEvent>({
        ...breaker,
        onRefused: () => {
          ctx.outcome.failed = refused;
        },
      }),
    );
}

/** Only OpenAI's fields leave this target; one operator per endpoint and mode, made on first use. */
export function strictStage(): Wrap {
  const strict: Partial<Record<string, ReturnType<typeof strictOpenAI>>> = {};
  return (inner) => (ctx) => {
    const { endpoint, stream } = ctx.request;
    return inner(ctx).pipe((strict[`${endpoint}:${stream}`] ??= strictOpenAI({ endpoint, stream })));
  };
}
