import { providerFields } from '../../config/provider-fields.js';
import { AWS_REGION } from '../../config/host-parts.js';
import { REGION_PLACEHOLDER } from '../hosts.js';
import type { ProviderDescriptor } from '../types.js';

/** A Claude model id, inference profile (`us.`, `global.`) or ARN naming one. */
export const CLAUDE_MODEL = /(?:^|[./:])anthropic\.claude/;

/** `{region}` in a base URL is replaced by the target's `cloud_b_region` (default below). */
export const DEFAULT_REGION = 'us-east-1';
/** The control-plane host, where the model list lives (the runtime host has none). */
export const CONTROL_PLANE_URL = `https://bedrock.${REGION_PLACEHOLDER}.amazonaws.com`;

/**
 * Cloud provider B, Bedrock Converse / ConverseStream. Auth: SigV4 (service `bedrock`) from the
 * `cloud_b_*` fields, done in `prepare`; or a Bedrock API key sent as `Authorization: Bearer`.
 * Paths are templates: `{model}` is the request's model id, encoded as one path segment.
 */
export const BEDROCK: ProviderDescriptor = {
  id: 'bedrock',
  aliases: ['aws-bedrock'],
  baseUrl: `https://bedrock-runtime.${REGION_PLACEHOLDER}.amazonaws.com`,
  paths: { chat: '/model/{model}/converse', messages: '/model/{model}/invoke', models: '/foundation-models' },
  // Messages requests are served as they are for Claude (claude.ts); other families go through chat.
  nativeModels: { messages: CLAUDE_MODEL },
  auth: { header: 'authorization', scheme: 'Bearer' },
  fields: providerFields('api_key', 'custom_host', 'cloud_b'),
  framing: 'aws-event-stream',
  region: { field: 'cloud_b_region', pattern: AWS_REGION, example: 'us-east-1', default: DEFAULT_REGION },
  // Converse's inferenceConfig takes temperature 0–1 and maxTokens ≥ 1 for every model family; a
  // family's own fields (additionalModelRequestFields) have the family's ranges: Claude's top_k 0–500.
  ranges: [
    { field: 'temperature', min: 0, max: 1 },
    { field: 'max_tokens', min: 1 },
    { field: 'max_completion_tokens', min: 1 },
    { field: 'top_k', min: 0, max: 500, models: CLAUDE_MODEL },
  ],
};

/** The stream path of chat (ConverseStream). */
export const STREAM_PATH = '/model/{model}/converse-stream';
