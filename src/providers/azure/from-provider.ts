import { GatewayError } from '../../errors/gateway-error.js';
import { fromOpenAIJson } from '../openai-compatible/from-provider.js';
import type { JsonResult, ProviderRequest } from '../types.js';

/**
 * Azure answers in OpenAI's shape; its extras (`prompt_filter_results`, per-choice
 * `content_filter_results`, `content_filter_offsets`, the prompt-filter first chunk with `choices: []`)
 * stay in the body and chunks as sent. Only the AI Foundry model info needs a translation.
 */

/**
 * Azure AI Foundry: `GET /info` answers `{model_name, model_type, model_provider_name}` (one model per
 * endpoint) → OpenAI's model list with that one model. Other endpoints are OpenAI-shaped.
 */
export function fromAzureAIJson(req: ProviderRequest, text: string): JsonResult {
  const r = fromOpenAIJson(req, text);
  if (req.endpoint !== 'models') return r;
  const info = r.body as Record<string, unknown>;
  if (typeof info.model_name !== 'string') {
    throw new GatewayError('upstream_invalid_response', 'The provider answered /info without a model_name.');
  }
  const model: Record<string, unknown> = { id: info.model_name, object: 'model', created: 0, owned_by: info.model_provider_name ?? 'azure-ai' };
  if (typeof info.model_type === 'string') model.model_type = info.model_type;
  return { body: { object: 'list', data: [model] } };
}
