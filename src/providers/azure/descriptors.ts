import { providerFields } from '../../config/provider-fields.js';
import type { ProviderDescriptor } from '../types.js';

/**
 * The default base URLs. Each is a marker the translator replaces with the URL it composes from the
 * target's fields (`{resource_name}`; the cloud_a endpoint); a custom_host or an operator's
 * provider-base-urls entry is used as it is, playing the same role (Azure OpenAI: the `…/openai`
 * base; AI Foundry: the endpoint's base).
 */
export const AZURE_OPENAI_DEFAULT_BASE = 'https://{resource_name}.openai.azure.com/openai';
export const AZURE_AI_DEFAULT_BASE = 'https://{cloud_a_endpoint}';

/** The api-version Azure OpenAI gets when the target names none (GA, and the first with stream usage). */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/**
 * Azure OpenAI (cloud A, deployments): `{base}/deployments/{deployment_id}/{path}?api-version=…`;
 * `api-key` (or an Entra ID bearer token). Paths are below the deployment (models: below the base).
 */
export const AZURE_OPENAI: ProviderDescriptor = {
  id: 'azure-openai',
  aliases: ['azure'],
  baseUrl: AZURE_OPENAI_DEFAULT_BASE,
  paths: { chat: '/chat/completions', completions: '/completions', embeddings: '/embeddings', models: '/models' },
  auth: { header: 'api-key' },
  fields: providerFields('api_key', 'custom_host', 'deployment'),
  injectStreamUsage: true,
};

/**
 * Azure AI Foundry serverless (MaaS) and managed (online) endpoints speaking the Azure AI model
 * inference API: `{base}/chat/completions`, `{base}/embeddings`, `GET {base}/info`; Bearer key.
 */
export const AZURE_AI: ProviderDescriptor = {
  id: 'azure-ai',
  aliases: ['azure-foundry'],
  baseUrl: AZURE_AI_DEFAULT_BASE,
  paths: { chat: '/chat/completions', embeddings: '/embeddings', models: '/info' },
  auth: { header: 'authorization', scheme: 'Bearer' },
  fields: providerFields('api_key', 'custom_host', 'cloud_a'),
};
