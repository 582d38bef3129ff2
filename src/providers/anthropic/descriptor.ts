import { providerFields } from '../../config/provider-fields.js';
import type { ProviderDescriptor } from '../types.js';

/**
 * Anthropic's Messages API: chat (translated), Messages and its token count (as they are) and the
 * model list. Anthropic has
 * no legacy completions and no embeddings, so those endpoints are answered `unsupported_endpoint`.
 * `/models?limit=1000` asks for every model in one page (Anthropic pages by 20 otherwise).
 */
export const ANTHROPIC: ProviderDescriptor = {
  id: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  paths: { chat: '/messages', messages: '/messages', count_tokens: '/messages/count_tokens', models: '/models?limit=1000' },
  auth: { header: 'x-api-key' },
  extraHeaders: { 'anthropic-version': '2023-06-01' },
  fields: providerFields('api_key', 'custom_host'),
  // Messages API: temperature 0–1 (OpenAI's is 0–2), top_k ≥ 0, max_tokens ≥ 1.
  ranges: [
    { field: 'temperature', min: 0, max: 1 },
    { field: 'top_k', min: 0 },
    { field: 'max_tokens', min: 1 },
    { field: 'max_completion_tokens', min: 1 },
  ],
};

/** `max_tokens` Anthropic requires on every request, when the client sets neither max_completion_tokens nor max_tokens. */
export const DEFAULT_MAX_TOKENS = 4096;
