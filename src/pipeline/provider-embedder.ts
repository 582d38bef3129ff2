import { lastValueFrom } from 'rxjs';
import { GatewayError } from '../errors/gateway-error.js';
import { callTarget } from './call-target.js';
import { newContext, type PipelineDeps } from './context.js';
import type { TargetNode } from '../plan/types.js';
import { l2normalize } from '../util/vector.js';

/**
 * Embeddings from a provider's /v1/embeddings, through the gateway's own provider layer (the
 * operator's configured target). Returns L2-normalised float vectors.
 */
export function providerEmbedder(target: TargetNode, model: string, deps: () => PipelineDeps): (text: string) => Promise<Float32Array> {
  return async (text) => {
    const d = deps();
    const ctx = newContext('semantic-cache', { endpoint: 'embeddings', body: { model, input: text, encoding_format: 'float' }, stream: false, headers: {} }, d.now(), '/v1/embeddings');
    const ev = await lastValueFrom(callTarget(target, ctx, d));
    const data = ev.type === 'json' ? (ev.body as { data?: { embedding?: unknown }[] }).data : undefined;
    const emb = data?.[0]?.embedding;
    if (!Array.isArray(emb) || emb.length === 0) throw new GatewayError('upstream_invalid_response', 'The embeddings target returned no float embedding.');
    const v = Float32Array.from(emb as number[]);
    // in place; a zero or non-numeric vector has no direction to match by (the lookup goes on by exact key)
    if (!l2normalize(v, v)) throw new GatewayError('upstream_invalid_response', 'The embeddings target returned a zero or non-numeric embedding.');
    return v;
  };
}
