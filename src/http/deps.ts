import type { Exposition } from '../metrics/exposition.js';
import type { Tracing } from '../metrics/tracing.js';
import { bearerToken, headerValue, REQUEST_HEADERS } from '../config/headers.js';
import { GatewayError } from '../errors/gateway-error.js';
import { ERROR_CATALOG } from '../errors/codes.js';
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
import type { ResponsesService } from '../management/responses.js';
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
  /** The stored responses' routes (GET/DELETE /v1/responses/:id, its input items); absent: not served. */
  responses?: ResponsesService;
  logger: Logger;
  bodyLimitBytes: number;
  /** GET /metrics: the registry's text, classic or OpenMetrics as the scraper's Accept header asks. */
  metrics: Exposition;
  /** Request tracing (--otlp-endpoint); absent: off, and no span is made. */
  tracing?: Tracing;
  /** True once shutdown has begun: /ready answers 503 and connections are not kept alive. */
  isDraining: () => boolean;
}

/** The catalog's 401 text says which header carries what; a specific cause goes before it. */
const noKey = (cause: string): string => `${cause} ${ERROR_CATALOG.missing_gateway_key.message}`;

/** The exchange's key is `record`, and its headers a copy without `header` (which carried it), so nothing after sees it. */
function keyFrom(ex: Exchange, record: ApiKeyRecord, header: string): void {
  ex.gatewayKey = record;
  const { [header]: _gatewayKey, ...rest } = ex.req.headers;
  ex.headers = rest;
}

/**
 * The gateway key → its record on the exchange; throws 401 when there is none or it is unknown.
 *
 * The key is taken from `x-gateway-api-key`; only when that header is absent, from `x-api-key` (the
 * Anthropic SDKs' `apiKey`) when it holds a gateway key, else from `Authorization: Bearer` (the
 * OpenAI SDKs' `apiKey`, the Anthropic SDKs' `authToken`). Never both ways at once: with
 * x-gateway-api-key present, Authorization and x-api-key keep their meaning as provider keys and are
 * not tried. When another header carried the gateway key, the exchange's `headers` become a copy
 * without it, so nothing after this (the resolver's provider key, hooks, forwarded headers) sees it;
 * only such requests pay for the copy.
 */
export function authenticate(ex: Exchange, keys: ApiKeyStore): void {
  const headers = ex.req.headers;
  const key = headerValue(headers, REQUEST_HEADERS.apiKey);
  if (key !== undefined) {
    if (!key) throw new GatewayError('missing_gateway_key', noKey('The x-gateway-api-key header is empty.'), { param: REQUEST_HEADERS.apiKey });
    const record = keys.verify(key);
    if (!record) throw new GatewayError('invalid_gateway_key', undefined, { param: REQUEST_HEADERS.apiKey });
    ex.gatewayKey = record;
    return;
  }
  const apiKey = headerValue(headers, 'x-api-key');
  const byApiKey = apiKey ? keys.verify(apiKey) : undefined;
  if (byApiKey) return keyFrom(ex, byApiKey, 'x-api-key');
  const bearer = bearerToken(headers);
  if (!bearer) {
    if (!apiKey) throw new GatewayError('missing_gateway_key', undefined, { param: REQUEST_HEADERS.apiKey });
    throw new GatewayError('missing_gateway_key', noKey('x-gateway-api-key is absent and x-api-key is not a gateway key.'), { param: 'x-api-key' });
  }
  const record = keys.verify(bearer);
  if (!record) {
    throw new GatewayError('missing_gateway_key', noKey('x-gateway-api-key is absent and the Authorization bearer token is not a gateway key.'), {
      param: 'authorization',
    });
  }
  keyFrom(ex, record, 'authorization');
}
