import type { Registry } from 'prom-client';
import { headerValue, REQUEST_HEADERS } from '../config/headers.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Logger } from '../util/log.js';
import type { PipelineDeps } from '../pipeline/context.js';
import type { Stages } from '../pipeline/run-request.js';
import type { ConfigResolver } from '../plan/resolve.js';
import type { ApiKeyStore } from '../state/api-key-store.js';
import type { ApiKeyRecord } from '../security/api-keys.js';
import type { GuardrailsService } from '../management/guardrails.js';
import type { PoliciesService } from '../management/policies.js';
import type { PromptsService } from '../management/prompts.js';
import type { PromptRenderer } from '../pipeline/prompt.js';
import type { ApiKeysService } from '../management/api-keys.js';
import type { VirtualKeysService } from '../management/virtual-keys.js';
import type { RequestLogStore } from '../state/request-log-store.js';
import type { Exchange } from './exchange.js';

/** What the edge is built from (by the composition root, src/gateway.ts). */
export interface AppDeps {
  resolver: ConfigResolver;
  pipeline: PipelineDeps;
  /** The request stages beyond the plan (usage limits and the ledger); absent: none. */
  stages?: Stages;
  apiKeys: ApiKeyStore;
  /** The guardrails API's logic (POST/GET/PUT/DELETE /v1/guardrails). */
  guardrails: GuardrailsService;
  /** The prompts API's logic (POST/GET/PUT/DELETE /v1/prompts). */
  prompts: PromptsService;
  /** Renders a request's prompt template (a config's prompt_id) into its body. */
  promptRenderer: PromptRenderer<ApiKeyRecord | undefined>;
  /** The usage-limits API's logic (/v1/policies/usage-limits). */
  policies: PoliciesService;
  /** The admin API for gateway keys (/v1/api-keys). */
  adminKeys: ApiKeysService;
  /** The virtual keys API (/v1/virtual-keys). */
  virtualKeys: VirtualKeysService;
  /** Where each proxied request's record is appended (and GET /v1/logs reads). */
  requestLogs: RequestLogStore;
  logger: Logger;
  bodyLimitBytes: number;
  metrics: Registry;
  /** True once shutdown has begun: /ready answers 503 and connections are not kept alive. */
  isDraining: () => boolean;
}

/** x-gateway-api-key → the key's record on the exchange; throws 401 when missing or unknown. */
export function authenticate(ex: Exchange, keys: ApiKeyStore): void {
  const key = headerValue(ex.req.headers, REQUEST_HEADERS.apiKey);
  if (!key) throw new GatewayError('missing_gateway_key');
  const record = keys.verify(key);
  if (!record) throw new GatewayError('invalid_gateway_key');
  ex.gatewayKey = record;
}
