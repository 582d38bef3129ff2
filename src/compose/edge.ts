import type { RequestListener } from 'node:http';
import { createHandler } from '../http/app.js';
import type { AppDeps } from '../http/deps.js';
import type { HotRoute } from '../http/router.js';
import { Exposition } from '../metrics/exposition.js';
import type { Tracing } from '../metrics/tracing.js';
import { ApiKeysService } from '../management/api-keys.js';
import { callerScope } from '../management/common.js';
import { checksValidator, GuardrailsService, type ValidateChecks } from '../management/guardrails.js';
import { PoliciesService } from '../management/policies.js';
import { PromptsService } from '../management/prompts.js';
import { ResponsesService } from '../management/responses.js';
import { virtualKeyChecker, VirtualKeysService } from '../management/virtual-keys.js';
import { resolveCheck } from '../checks/registry.js';
import { PromptRenderer } from '../pipeline/prompt.js';
import { ConfigResolver } from '../plan/resolve.js';
import type { Basics } from './basics.js';
import type { Pipeline } from './pipeline.js';
import type { Providers } from './providers.js';
import type { State } from './state.js';

/** What the edge adds beside the proxied endpoints. */
export interface EdgeExtras {
  /** More hot routes (method, path pattern, handler). */
  routes?: readonly HotRoute[];
  /** Validates a stored guardrail's checks; default: the check library's validator. */
  validateChecks?: ValidateChecks;
}

/** The edge: the request handler, and the management services the bootstrap file declares into. */
export interface Edge {
  handler: RequestListener;
  policies: PoliciesService;
  prompts: PromptsService;
}

/** The management APIs' services over the stores, the resolver, and the handler serving them and the proxied endpoints. */
export function buildEdge(b: Basics, extras: EdgeExtras, parts: { providers: Providers; state: State; pipeline: Pipeline; tracing?: Tracing | undefined }, isDraining: () => boolean): Edge {
  const { options, logger, telemetry, now } = b;
  const { providers, state, pipeline } = parts;
  const { stores, catalog } = state;
  const policies = new PoliciesService(stores.policies, stores.usage, now);
  const prompts = new PromptsService(stores.prompts);
  const responses = new ResponsesService(stores.responses, pipeline.stages.responses?.background, stores.responseCancels);
  // With Redis, the other instances' cancel requests reach the runs of this one (closed with the stores).
  stores.responseCancels?.serve((id) => responses.stopHere(id));
  const deps: AppDeps = {
    resolver: new ConfigResolver(pipeline.planDeps, catalog.savedConfigs),
    pipeline: pipeline.deps,
    stages: pipeline.stages,
    metrics: new Exposition(telemetry.registry),
    apiKeys: catalog.apiKeys,
    guardrails: new GuardrailsService(stores.guardrails, extras.validateChecks ?? checksValidator(resolveCheck)),
    prompts,
    // Prompts are looked up in the scope of the request's key (its workspace; proxying ignores admin).
    promptRenderer: new PromptRenderer((idOrSlug, versionId, scope) => stores.prompts.lookup(idOrSlug, versionId, scope), callerScope, {
      maxSteps: options['template-max-steps'],
      maxOutput: options['template-max-output'],
    }),
    policies,
    adminKeys: new ApiKeysService(stores.apiKeys),
    virtualKeys: new VirtualKeysService(stores.virtualKeys, virtualKeyChecker(providers.registry, providers.hostGuard), state.masterKey !== undefined, {
      bootstrapFile: options.bootstrap,
    }),
    requestLogs: stores.requestLogs,
    responses,
    logger,
    bodyLimitBytes: options['body-limit'],
    isDraining,
  };
  if (parts.tracing) deps.tracing = parts.tracing;
  return { handler: createHandler(deps, extras.routes), policies, prompts };
}
