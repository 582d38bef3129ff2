import { GatewayError } from '../../errors/gateway-error.js';
import { jsonUpstream } from '../openai-compatible/to-provider.js';
import { forwardedHeaders } from '../forward-headers.js';
import type { ProviderDescriptor, ProviderRequest, Target, UpstreamRequest } from '../types.js';
import { toAnthropicBody } from './anthropic-body.js';
import { toAnthropicNative } from './native.js';

/** OpenAI-shaped request → Anthropic upstream request; a Messages request as it is (native.ts). Pure. */
export function toAnthropic(descriptor: ProviderDescriptor, req: ProviderRequest, target: Target, baseUrl: string): UpstreamRequest {
  const path = descriptor.paths[req.endpoint];
  if (!path) {
    const route = req.endpoint === 'completions' ? '/v1/completions' : `/v1/${req.endpoint}`;
    throw new GatewayError('unsupported_endpoint', `Provider ${descriptor.id} does not serve ${route}; it serves /v1/chat/completions, /v1/messages, /v1/messages/count_tokens and /v1/models.`);
  }
  if (req.endpoint === 'messages' || req.endpoint === 'count_tokens') return toAnthropicNative(descriptor, req, target, baseUrl, path);
  // Neither its own auth header nor a fixed header (anthropic-version) can be replaced by a forwarded one.
  const headers = forwardedHeaders(req, (h) => h === descriptor.auth.header || descriptor.extraHeaders?.[h] !== undefined);
  if (descriptor.extraHeaders) Object.assign(headers, descriptor.extraHeaders);
  if (target.api_key) headers[descriptor.auth.header] = target.api_key;
  return jsonUpstream(baseUrl, path, req, target, headers, req.body && toAnthropicBody(req.body, req.stream));
}
