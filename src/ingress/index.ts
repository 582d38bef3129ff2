import { CHAT_COMPLETIONS } from './chat-completions.js';
import { COMPLETIONS } from './completions.js';
import { EMBEDDINGS } from './embeddings.js';
import { ANTHROPIC_MODELS } from './anthropic-models.js';
import { COUNT_TOKENS, MESSAGES } from './messages.js';
import { MODELS } from './models.js';
import { RESPONSES } from './responses.js';
import type { IngressFormat } from './types.js';

export { OPENAI_FRAMING } from './openai.js';
export { ANTHROPIC_FRAMING } from './anthropic-framing.js';
export type { Framing, IngressFormat, IngressRoute } from './types.js';

/** The front doors the gateway serves: each route of each is a hot route of the edge (src/http/app.ts). */
export const INGRESS: readonly IngressFormat[] = [
  CHAT_COMPLETIONS,
  COMPLETIONS,
  EMBEDDINGS,
  MODELS,
  RESPONSES,
  MESSAGES,
  COUNT_TOKENS,
  ANTHROPIC_MODELS,
];
