import type { Provider } from '../types.js';
import { VERTEX_AI } from './descriptor.js';
import { fromVertexError, fromVertexJson, fromVertexStreamEvent, vertexStreamEnd, vertexStreamStart, type VertexStreamState } from './from-provider.js';
import { TokenCache } from './token.js';
import { toVertex } from './to-provider.js';

export interface VertexProvider extends Provider<VertexStreamState> {
  /** This instance's service-account tokens (one cache per gateway). */
  tokens: TokenCache;
}

/**
 * Cloud provider C, Gemini on Vertex AI. `prepare` puts a service account's access token on the
 * request (exchanged once, shared, refreshed before expiry); a target with only an access token in
 * `api_key` was given its Bearer header by `toProvider` and is sent as built.
 */
export function vertexAI(): VertexProvider {
  const tokens = new TokenCache();
  return {
    descriptor: VERTEX_AI,
    tokens,
    toProvider: toVertex,
    async prepare(request, target, ctx) {
      const sa = target.extra?.cloud_c_service_account_json as Record<string, unknown> | undefined;
      if (!sa) return request;
      const token = await tokens.token(sa, ctx);
      return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
    },
    fromJson: fromVertexJson,
    fromError: fromVertexError,
    streamStart: vertexStreamStart,
    fromStreamEvent: fromVertexStreamEvent,
    streamEnd: vertexStreamEnd,
  };
}
