import { z } from 'zod';
import { parseOrThrow } from '../config/issues.js';
import type { ProviderRequest } from '../providers/types.js';
import { ANTHROPIC_FRAMING } from './anthropic-framing.js';
import type { IngressFormat } from './types.js';

const MessageParam = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))], {
    error: 'content must be a string or an array of content blocks',
  }),
});

/**
 * What the gateway needs of a Messages request to route and account it: the model, max_tokens, the
 * messages' roles and content shape, and the types of the fields stages read. Shallow: every object
 * is loose (unknown fields pass on) and blocks are checked for their `type` only; deeper validation is
 * the upstream's.
 */
const MessagesBody = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.int().min(1),
  messages: z.array(MessageParam),
  system: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))], { error: 'system must be a string or an array of text blocks' }).optional(),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string()).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.int().min(0).optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
  tools: z.array(z.looseObject({ name: z.string() })).optional(),
  tool_choice: z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']) }).optional(),
  thinking: z.looseObject({ type: z.string() }).optional(),
});

/** A token count's body: a Messages body without max_tokens. */
const CountTokensBody = MessagesBody.extend({ max_tokens: z.int().min(1).optional() });

/**
 * Validates with `schema` and gives back the client's own object, not the schema's copy: its keys
 * stay in the client's order, so a pass-through upstream gets the bytes the client sent.
 */
const validated =
  (schema: z.ZodType) =>
  (raw: unknown): Record<string, unknown> => {
    parseOrThrow(schema, raw, 'invalid_request_body', 'request body');
    return raw as Record<string, unknown>;
  };

/**
 * Anthropic's Messages API: POST /v1/messages (Claude Code adds `?beta=true`, which the edge's routing
 * ignores), JSON or a stream of named SSE events, errors in Anthropic's envelope.
 */
export const MESSAGES: IngressFormat = {
  id: 'messages',
  endpoint: 'messages',
  routes: [{ method: 'POST', path: '/v1/messages' }],
  hasBody: true,
  parse: validated(MessagesBody),
  toRequest: (body, headers): ProviderRequest => ({ endpoint: 'messages', body, stream: body?.stream === true, headers }),
  framing: ANTHROPIC_FRAMING,
};

/** Anthropic's token count of a Messages request: POST /v1/messages/count_tokens, JSON only. */
export const COUNT_TOKENS: IngressFormat = {
  id: 'count_tokens',
  endpoint: 'count_tokens',
  routes: [{ method: 'POST', path: '/v1/messages/count_tokens' }],
  hasBody: true,
  parse: validated(CountTokensBody),
  toRequest: (body, headers): ProviderRequest => ({ endpoint: 'count_tokens', body, stream: false, headers }),
  framing: ANTHROPIC_FRAMING,
};
