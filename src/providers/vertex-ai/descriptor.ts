import { providerFields } from '../../config/provider-fields.js';
import { GCP_REGION } from '../../config/host-parts.js';
import type { ProviderDescriptor } from '../types.js';
import { VERTEX_CLAUDE_MODEL } from './claude.js';

/** Google's default token endpoint (a service account's usual `token_uri`). */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

/**
 * The default base URL: `{region}` is filled from `cloud_c_region` (`global` and the `us`/`eu`
 * multi-regions have hosts of their own). An operator's base-URL override may hold `{region}` too.
 */
export const VERTEX_BASE_URL = 'https://{region}-aiplatform.googleapis.com';

/**
 * Cloud provider C: Gemini on Vertex AI, and Claude for the Messages front door. Paths are below `/v1/projects/{p}/locations/{r}` for chat
 * (`:generateContent`, `:streamGenerateContent?alt=sse`); the model list is the publisher's.
 */
export const VERTEX_AI: ProviderDescriptor = {
  id: 'vertex-ai',
  aliases: ['vertex'],
  baseUrl: VERTEX_BASE_URL,
  paths: { chat: ':generateContent', messages: ':rawPredict', models: '/v1beta1/publishers/google/models' },
  // Messages requests are served as they are for Claude models (claude.ts); Gemini's go through chat.
  nativeModels: { messages: VERTEX_CLAUDE_MODEL },
  auth: { header: 'authorization', scheme: 'Bearer' },
  fields: providerFields('api_key', 'custom_host', 'cloud_c'),
  framing: 'sse',
  region: { field: 'cloud_c_region', pattern: GCP_REGION, example: 'us-central1, global, us or eu' },
  // Gemini's generationConfig: candidateCount 1–8 (OpenAI's n goes to 128); the penalties are −2 up
  // to but not including 2. Temperature (0–2) and top_p (0–1) are OpenAI's ranges already.
  ranges: [
    { field: 'n', min: 1, max: 8 },
    { field: 'presence_penalty', min: -2, max: 2, maxExclusive: true },
    { field: 'frequency_penalty', min: -2, max: 2, maxExclusive: true },
  ],
};
