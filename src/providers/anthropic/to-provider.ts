import { GatewayError } from '../../errors/gateway-error.js';
import { jsonUpstream } from '../openai-compatible/to-provider.js';
import { forwardedHeaders } from '../forward-headers.js';
import type { ProviderDescriptor, ProviderRequest, Target, UpstreamRequest } from '../types.js';
import { toAnthropicBody } from './anthropic-body.js';

/** OpenAI-shaped request → Anthropic upstream request. Pure. */
export function toAnthropic(descriptor: ProviderDescriptor, req: ProviderRequest, target: Target, baseUrl: string): UpstreamRequest {
  const path = descriptor.paths[req.endpoint];
  if (!path) {
    const route = req.endpoint === 'completions' ? '/v1/completions' : `/v1/${req.endpoint}`;
    throw new GatewayError('unsupported_endpoint', `Provider ${descriptor.id} does not serve ${route}; it serves /v1/chat/completions and /v1/models.`);
  }
  // Neither its own auth header nor a fixed header (anthropic-version) can be replaced by a forwarded one.
  const headers = forwardedHeaders(req, (h) => h === descriptor.auth.header || descriptor.extraHeaders?.[h] !== undefined);
  if (descriptor.extraHeaders) Object.assign(headers, descriptor.extraHeaders);
  if (target.api_key) headers[descriptor.auth.header] = target.api_key;
  return jsonUpstream(baseUrl, path, req, target, headers, req.body && toAnthropicBody(req.body, req.stream));
}
