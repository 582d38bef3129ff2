/**
 * The one error catalog. Every error the gateway itself produces has a code here, with its HTTP
 * status, its OpenAI-style `type`, and a default message. docs/errors.md's table is kept equal to
 * this list, both ways, by test/errors/catalog.test.ts.
 */
export const ERROR_CATALOG = {
  invalid_json: { status: 400, type: 'invalid_request_error', message: 'The request body is not valid JSON.' },
  json_too_deep: { status: 400, type: 'invalid_request_error', message: 'The JSON nests objects and arrays more than 128 levels deep.' },
  template_too_large: { status: 400, type: 'invalid_request_error', message: 'The prompt template renders more than this gateway allows for one request.' },
  invalid_request_body: { status: 400, type: 'invalid_request_error', message: 'The request body is invalid.' },
  invalid_header: { status: 400, type: 'invalid_request_error', message: 'A request header is invalid.' },
  invalid_query_parameter: { status: 400, type: 'invalid_request_error', message: 'A query parameter is invalid.' },
  context_length_exceeded: {
    status: 400,
    type: 'invalid_request_error',
    message: "The input does not fit in the model's context window.",
  },
  invalid_config: { status: 400, type: 'invalid_request_error', message: 'The gateway config is invalid.' },
  missing_provider: {
    status: 400,
    type: 'invalid_request_error',
    message:
      'No provider: send x-gateway-provider with Authorization, x-gateway-virtual-key, x-gateway-config or x-gateway-custom-host.',
  },
  missing_provider_credential: {
    status: 400,
    type: 'invalid_request_error',
    message:
      'A provider is named but no credential for it: send Authorization: Bearer <provider key> with the gateway key in x-gateway-api-key, or use a virtual key or a config with api_key.',
  },
  unknown_provider: { status: 400, type: 'invalid_request_error', message: 'The provider is not known to this gateway.' },
  unsupported_endpoint: { status: 400, type: 'invalid_request_error', message: 'The provider does not serve this endpoint.' },
  custom_host_not_allowed: {
    status: 400,
    type: 'invalid_request_error',
    message: 'custom_host points at a loopback, private or link-local address that is not in GATEWAY_TRUSTED_HOSTS.',
  },
  virtual_key_destination_fixed: {
    status: 400,
    type: 'invalid_request_error',
    message: "A request that uses a virtual key set a field that changes where the key's credentials go, and the key does not allow it.",
  },
  unknown_target: { status: 400, type: 'invalid_request_error', message: 'The config names a target that does not exist.' },
  missing_gateway_key: {
    status: 401,
    type: 'authentication_error',
    message:
      'No gateway key: send it in x-gateway-api-key (Authorization: Bearer then carries the provider key), or as Authorization: Bearer <gateway key> without x-gateway-api-key, or as x-api-key: <gateway key> without it (the provider credential then comes from x-gateway-virtual-key or the config).',
  },
  invalid_gateway_key: {
    status: 401,
    type: 'authentication_error',
    message: 'The x-gateway-api-key is not a gateway key of this gateway. (With x-gateway-api-key present, Authorization: Bearer carries the provider key.)',
  },
  forbidden_scope: {
    status: 403,
    type: 'permission_error',
    message: 'This gateway key may not manage that: it is bound to another workspace, or the route needs scopes: [admin].',
  },
  config_not_found: { status: 404, type: 'invalid_request_error', message: 'No saved config has this id.' },
  virtual_key_not_found: { status: 404, type: 'invalid_request_error', message: 'No virtual key has this id.' },
  guardrail_not_found: { status: 404, type: 'invalid_request_error', message: 'No guardrail has this id or slug (in the scope of this gateway key).' },
  prompt_not_found: { status: 404, type: 'invalid_request_error', message: 'No prompt template has this id or slug (in the scope of this gateway key).' },
  policy_not_found: { status: 404, type: 'invalid_request_error', message: 'No usage-limit policy has this id (in the scope of this gateway key).' },
  api_key_not_found: { status: 404, type: 'invalid_request_error', message: 'No gateway key made through the API has this id (in the scope of this gateway key).' },
  response_not_found: { status: 404, type: 'invalid_request_error', message: 'No stored response has this id (in the workspace of this gateway key).' },
  model_not_found: { status: 404, type: 'invalid_request_error', message: "The model is not in this gateway's model list (GET /v1/models) for this request." },
  route_not_found: { status: 404, type: 'invalid_request_error', message: 'Unknown route.' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', message: 'The route does not serve this method; Allow lists those it does.' },
  virtual_key_exists: { status: 409, type: 'invalid_request_error', message: 'A virtual key with this id already exists.' },
  virtual_key_read_only: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The virtual key is declared in the bootstrap file: it is changed in that file, not through the API.',
  },
  request_timeout: { status: 408, type: 'timeout_error', message: 'The request timed out.' },
  hooks_failed: {
    status: 446,
    type: 'hooks_failed',
    message: 'A guardrail or hook denied the request or its answer.',
  },
  usage_limit_exceeded: {
    status: 412,
    type: 'usage_limit_error',
    message: 'A usage-limit policy has nothing left for this request: its usage reached the limit, or requests in flight reserved the rest.',
  },
  price_unknown: {
    status: 412,
    type: 'usage_limit_error',
    message: 'A cost usage-limit policy applies to this request, but the price table has no price for its model.',
  },
  too_many_background_responses: {
    status: 429,
    type: 'rate_limit_error',
    message: 'This gateway, or this gateway key, runs as many background responses as it allows; retry when one has ended.',
  },
  body_too_large: { status: 413, type: 'invalid_request_error', message: 'The request body is too large.' },
  unsupported_media_type: {
    status: 415,
    type: 'invalid_request_error',
    message: 'The request body must be JSON (Content-Type: application/json).',
  },
  upstream_error: { status: 502, type: 'upstream_error', message: 'The provider returned an error.' },
  upstream_unreachable: { status: 502, type: 'upstream_error', message: 'The provider could not be reached.' },
  upstream_invalid_response: { status: 502, type: 'upstream_error', message: 'The provider returned a response the gateway cannot read.' },
  upstream_response_too_large: { status: 502, type: 'upstream_error', message: 'The provider\'s answer is larger than this gateway accepts; the call was aborted.' },
  stream_interrupted: { status: 502, type: 'upstream_error', message: 'The provider stream ended before it was complete.' },
  circuit_open: { status: 503, type: 'server_error', message: 'Every eligible target has an open circuit.' },
  store_unavailable: { status: 503, type: 'server_error', message: 'The shared store is not reachable; the change was not confirmed. Read it back, then retry.' },
  master_key_missing: {
    status: 503,
    type: 'server_error',
    message: 'This gateway has no master key (SLUICE_MASTER_KEY), so it does not store secrets.',
  },
  usage_limits_unavailable: {
    status: 503,
    type: 'server_error',
    message: 'The usage counters cannot be reached, so a request under a usage-limit policy cannot be admitted; retry the request.',
  },
  shutting_down: { status: 503, type: 'server_error', message: 'The gateway is shutting down; retry the request.' },
  upstream_timeout: { status: 504, type: 'timeout_error', message: 'The provider did not answer in time.' },
  internal_error: { status: 500, type: 'server_error', message: 'Internal gateway error.' },
} as const satisfies Record<string, { status: number; type: string; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;
