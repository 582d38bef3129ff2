import type { ProviderRequest } from './types.js';

/**
 * Headers `forward_headers` can never pass, for every provider: framing and hop-by-hop headers, the
 * body's type, and credentials (the gateway sets the provider's own).
 */
const NEVER_FORWARDED: ReadonlySet<string> = new Set([
  'host', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'content-length',
  'content-type', 'accept', 'authorization', 'cookie', 'openai-organization', 'openai-project',
]);

/**
 * The client headers a target's `forward_headers` names, under the names as the config wrote them,
 * less those never forwarded, `x-gateway-*`, `proxy-*`, and what the provider refuses
 * (`refused`: its own auth header, fixed extra headers, signed `x-amz-*`...). Several values join with
 * ", ".
 */
export function forwardedHeaders(req: ProviderRequest, refused?: (lowerName: string) => boolean, into: Record<string, string> = {}): Record<string, string> {
  const fwd = req.forwardHeaders;
  if (!fwd) return into;
  for (const name of fwd) {
    const lower = name.toLowerCase();
    if (NEVER_FORWARDED.has(lower) || lower.startsWith('x-gateway-') || lower.startsWith('proxy-') || refused?.(lower)) continue;
    const v = req.headers[lower];
    if (v !== undefined) into[name] = Array.isArray(v) ? v.join(', ') : v;
  }
  return into;
}
