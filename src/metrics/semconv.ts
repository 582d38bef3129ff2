/**
 * GenAI semantic-convention attribute names. They are still "development" in the conventions, so,
 * as @opentelemetry/semantic-conventions asks of instrumentation, they are copied here rather than
 * imported from its incubating entry point (which may change them in a minor version).
 */
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const ATTR_GEN_AI_REQUEST_MAX_TOKENS = 'gen_ai.request.max_tokens';
export const ATTR_GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';

/** The gateway's own attributes. */
export const ATTR_SLUICE_TRACE_ID = 'sluice.trace_id';
export const ATTR_SLUICE_TARGET = 'sluice.target';
export const ATTR_SLUICE_ATTEMPT = 'sluice.attempt';
export const ATTR_SLUICE_ATTEMPTS = 'sluice.attempts';
export const ATTR_SLUICE_RETRY = 'sluice.retry';
export const ATTR_SLUICE_OUTCOME = 'sluice.outcome';
export const ATTR_SLUICE_STREAM = 'sluice.stream';
export const ATTR_SLUICE_CACHE_STATUS = 'sluice.cache.status';
export const ATTR_SLUICE_HOOK_VERDICT = 'sluice.hook.verdict';
export const ATTR_SLUICE_CLIENT_ABORTED = 'sluice.client_aborted';
