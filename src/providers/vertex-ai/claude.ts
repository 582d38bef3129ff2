/**
 * Claude on Vertex AI, served as it is to the Messages front door: the client's Messages body with
 * `model` moved into the path (`publishers/anthropic/models/{model}:rawPredict`, `:streamRawPredict`
 * for a stream) and `anthropic_version` set as Vertex requires; the client's `anthropic-beta`
 * forwarded. Answers are Anthropic's own, read by the Anthropic provider's native functions
 * (src/providers/anthropic/native.ts). Pure.
 */
import type { ProviderRequest } from '../types.js';
import { bad } from './gemini-messages.js';

/** The API version Vertex AI takes in a Claude request's body (unless the client sent its own). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Claude model ids on Vertex AI (`claude-sonnet-4-5@20250929`, with or without the publisher path). */
export const VERTEX_CLAUDE_MODEL = /^(?:publishers\/anthropic\/models\/)?claude-/;

/** The path below `/v1/projects/{p}/locations/{r}` and the body of a Messages request. */
export function toVertexClaude(req: ProviderRequest): { path: string; body: string; beta?: string } {
  const { model, stream: _stream, ...rest } = req.body!;
  const id = typeof model === 'string' ? model.replace(/^publishers\/anthropic\/models\//, '') : '';
  if (id === '') throw bad('model', 'model must name a Claude model on Vertex AI, e.g. claude-sonnet-4-5@20250929.');
  const body = { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest };
  if (req.stream) (body as Record<string, unknown>).stream = true;
  const beta = req.headers['anthropic-beta'];
  return {
    path: `/publishers/anthropic/models/${encodeURIComponent(id)}${req.stream ? ':streamRawPredict' : ':rawPredict'}`,
    body: JSON.stringify(body),
    beta: Array.isArray(beta) ? beta.join(',') : beta,
  };
}
