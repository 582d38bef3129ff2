import { providerFields } from '../../config/provider-fields.js';
import type { ProviderDescriptor } from '../types.js';

const OPENAI_PATHS = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  models: '/models',
} as const;
/** OpenAI's own paths and its Responses API, which it serves itself (a host without it is reached through chat). */
const OPENAI_OWN_PATHS = { ...OPENAI_PATHS, responses: '/responses' } as const;
const CHAT_MODELS = { chat: '/chat/completions', models: '/models' } as const;
const CHAT_COMPLETIONS_MODELS = { chat: '/chat/completions', completions: '/completions', models: '/models' } as const;
const CHAT_EMBEDDINGS_MODELS = { chat: '/chat/completions', embeddings: '/embeddings', models: '/models' } as const;

const bearer = { header: 'authorization', scheme: 'Bearer' } as const;

/**
 * The target fields an OpenAI-compatible host uses: its key, a custom host, OpenAI's organization
 * and project. Any other provider field (deployment, cloud_*) with one of these providers is a 400.
 */
const fields = providerFields('api_key', 'custom_host', 'vendor');

/**
 * What makes a host differ from OpenAI, as data read by the shared functions (to-provider.ts,
 * from-provider.ts); no host is named anywhere else. Every entry is optional.
 */
export interface OpenAIQuirks {
  /** Top-level body fields the host names differently: OpenAI's name → the host's. */
  renameFields?: Readonly<Record<string, string>>;
  /**
   * Top-level body fields the host rejects and that carry nothing the host does not give otherwise
   * (e.g. `stream_options`, when the host sends usage on its own). Removed before sending.
   */
  dropFields?: readonly string[];
  /** Fields removed from assistant messages before sending (a host that refuses its own output back). */
  dropAssistantFields?: readonly string[];
  /**
   * Tool-call ids the host accepts: ids that do not match (e.g. `call_…`, `toolu_…` from another
   * provider) are rewritten, in `tool_calls[].id` and `tool_call_id` alike, to a stable id of
   * `length` characters from the alphabet `[A-Za-z0-9]` (the same input id always gives the same one).
   */
  toolCallIds?: { pattern: RegExp; length: number };
  /** Where else a chunk may carry usage (a path of keys), read when it has no `usage` of its own. */
  usageAt?: readonly (readonly string[])[];
  /** Finish reasons outside OpenAI's set → OpenAI's value, in responses and chunks. */
  finishReasons?: Readonly<Record<string, string>>;
}

/** A descriptor of an OpenAI-compatible host: the seam's descriptor plus its quirks. */
export interface OpenAICompatibleDescriptor extends ProviderDescriptor {
  quirks?: OpenAIQuirks;
}

/**
 * Every provider that speaks the OpenAI wire format is one entry here. Adding a host
 * is adding a line; quirks are data read by the shared functions, never a new branch elsewhere.
 * Local servers (vLLM, Ollama, LM Studio) have no default base URL: custom_host names them, so the
 * host guard applies to the address.
 */
export const OPENAI_COMPATIBLE: readonly OpenAICompatibleDescriptor[] = [
  { id: 'openai', baseUrl: 'https://api.openai.com/v1', paths: OPENAI_OWN_PATHS, auth: bearer, fields, injectStreamUsage: true },
  // Any other OpenAI-compatible host reached through custom_host (llama.cpp, TGI, LiteLLM, ...).
  { id: 'openai-compatible', aliases: ['custom'], paths: OPENAI_PATHS, auth: bearer, fields },
  { id: 'vllm', paths: OPENAI_PATHS, auth: bearer, fields, injectStreamUsage: true },
  { id: 'ollama', paths: OPENAI_PATHS, auth: bearer, fields, injectStreamUsage: true },
  { id: 'lmstudio', aliases: ['lm-studio'], paths: OPENAI_PATHS, auth: bearer, fields },
  {
    id: 'groq',
    baseUrl: 'https://api.groq.com/openai/v1',
    paths: CHAT_MODELS,
    auth: bearer,
    fields,
    injectStreamUsage: true,
    // Older streams carry usage only in the final chunk's x_groq.usage.
    quirks: { usageAt: [['x_groq', 'usage']] },
  },
  {
    id: 'mistral',
    aliases: ['mistral-ai'],
    baseUrl: 'https://api.mistral.ai/v1',
    paths: CHAT_EMBEDDINGS_MODELS,
    auth: bearer,
    fields,
    quirks: {
      renameFields: { seed: 'random_seed', max_completion_tokens: 'max_tokens' },
      // Strict validation (422 on unknown fields); usage comes on the last chunk unasked.
      dropFields: ['stream_options'],
      toolCallIds: { pattern: /^[a-zA-Z0-9]{9}$/, length: 9 },
      finishReasons: { model_length: 'length' },
    },
  },
  { id: 'together', aliases: ['together-ai'], baseUrl: 'https://api.together.xyz/v1', paths: OPENAI_PATHS, auth: bearer, fields, injectStreamUsage: true },
  { id: 'fireworks', aliases: ['fireworks-ai'], baseUrl: 'https://api.fireworks.ai/inference/v1', paths: OPENAI_PATHS, auth: bearer, fields, injectStreamUsage: true },
  {
    id: 'deepseek',
    baseUrl: 'https://api.deepseek.com/v1',
    paths: CHAT_MODELS,
    auth: bearer,
    fields,
    injectStreamUsage: true,
    quirks: {
      // reasoning_content is returned (kept as an extra) but refused (400) in input messages.
      dropAssistantFields: ['reasoning_content'],
      finishReasons: { insufficient_system_resource: 'length' },
    },
  },
  { id: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', paths: CHAT_COMPLETIONS_MODELS, auth: bearer, fields },
  { id: 'perplexity', aliases: ['perplexity-ai'], baseUrl: 'https://api.perplexity.ai', paths: { chat: '/chat/completions' }, auth: bearer, fields },
  { id: 'xai', aliases: ['x-ai', 'grok'], baseUrl: 'https://api.x.ai/v1', paths: CHAT_EMBEDDINGS_MODELS, auth: bearer, fields },
  { id: 'cerebras', baseUrl: 'https://api.cerebras.ai/v1', paths: CHAT_COMPLETIONS_MODELS, auth: bearer, fields },
];
