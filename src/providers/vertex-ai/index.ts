import type { Provider } from '../types.js';
import { VERTEX_AI } from './descriptor.js';
import { fromVertexError, fromVertexJson, fromVertexStreamEvent, vertexStreamEnd, vertexStreamStart, type VertexStreamState } from './from-provider.js';
import { TokenCache } from './token.js';
import { toVertex } from './to-provider.js';
import { fromNativeJson, fromNativeStreamEvent, nativeStreamEnd, nativeStreamStart, type NativeStreamState } from '../anthropic/native.js';

type State = VertexStreamState | NativeStreamState;
const isNative = (s: State): s is NativeStreamState => (s as NativeStreamState).native === true;

export interface VertexProvider extends Provider<State> {
  /** This instance's service-account tokens (one cache per gateway). */
  tokens: TokenCache;
}

/**
 * Cloud provider C, Gemini on Vertex AI (and Claude for Messages requests). `prepare` puts a service account's access token on the
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
    // A Messages request reached Claude (claude.ts): its answer is Anthropic's own.
    fromJson: (req, text) => (req.endpoint === 'messages' ? fromNativeJson(text) : fromVertexJson(req, text)),
    fromError: fromVertexError,
    streamStart: (req) => (req.endpoint === 'messages' ? nativeStreamStart() : vertexStreamStart(req)),
    fromStreamEvent: (s, ev) => (isNative(s) ? fromNativeStreamEvent(s, ev) : fromVertexStreamEvent(s, ev)),
    streamEnd: (s) => (isNative(s) ? nativeStreamEnd(s) : vertexStreamEnd(s)),
  };
}
