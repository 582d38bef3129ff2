import { providerFields } from '../../config/provider-fields.js';
import type { ProviderDescriptor } from '../types.js';

const OPENAI_PATHS = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  models: '/models',
} as const;

const bearer = { header: 'authorization', scheme: 'Bearer' } as const;

/**
 * The target fields an OpenAI-compatible host uses: its key, a custom host, OpenAI's organization
 * and project. (Config and virtual keys accept every group's fields today; issue 10 refuses the rest.)
 */
const fields = providerFields('api_key', 'custom_host', 'vendor');

/**
 * Every provider that speaks the OpenAI wire format is one entry here. Adding a host is adding a
 * line; quirks are data fields read by the shared functions, never a new branch elsewhere.
 */
export const OPENAI_COMPATIBLE: readonly ProviderDescriptor[] = [
  { id: 'openai', baseUrl: 'https://api.openai.com/v1', paths: OPENAI_PATHS, auth: bearer, fields, injectStreamUsage: true },
  // Any OpenAI-compatible host reached through custom_host (vLLM, Ollama, LM Studio, llama.cpp, ...).
  { id: 'openai-compatible', aliases: ['custom', 'vllm', 'ollama'], paths: OPENAI_PATHS, auth: bearer, fields },
  { id: 'groq', baseUrl: 'https://api.groq.com/openai/v1', paths: OPENAI_PATHS, auth: bearer, fields },
  { id: 'together', aliases: ['together-ai'], baseUrl: 'https://api.together.xyz/v1', paths: OPENAI_PATHS, auth: bearer, fields },
  { id: 'fireworks', aliases: ['fireworks-ai'], baseUrl: 'https://api.fireworks.ai/inference/v1', paths: OPENAI_PATHS, auth: bearer, fields },
  { id: 'deepseek', baseUrl: 'https://api.deepseek.com/v1', paths: OPENAI_PATHS, auth: bearer, fields },
  { id: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', paths: OPENAI_PATHS, auth: bearer, fields },
];
