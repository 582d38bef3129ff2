/**
 * Request-body schemas for the gateway's OpenAI-shaped endpoints (chat completions, legacy
 * completions, embeddings). They run on every request, so they are kept shallow and single-pass:
 *
 * - Every object is loose: fields the gateway does not know are passed through to the provider
 *   unchanged (validated known fields keep their values).
 * - Message content parts, tool definitions and the like are checked only for their outer type.
 * - Prompts / embedding inputs (possibly huge token arrays) are checked by one hand-written loop that
 *   stops at the first bad element, instead of a `z.union` of array types that would walk the array
 *   once per branch and collect one issue per element.
 *
 * Errors go through `parseOrThrow`, so a bad body is a 400 `invalid_request_body` GatewayError whose
 * `param` is the dotted path of the first bad field and whose `issues` carry the full paths.
 */
import { z } from 'zod';
import { parseOrThrow } from './issues.js';
import { bodyObjectError, pushIssue, streamOptionsCheck, whenFieldsValid } from './body-checks.js';
import { tokenInput } from './token-input.js';

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

const temperature = z.number().min(0).max(2);
const topP = z.number().min(0).max(1);
const penalty = z.number().min(-2).max(2);
const nonNegInt = z.int().min(0);
/** Any safe integer (OpenAI documents roughly ±9.2e18; JSON numbers beyond 2^53 lose precision anyway). */
const seed = z.int();
const nChoices = z.int().min(1).max(128);

/** Token ids as object keys: "50256". */
const TOKEN_ID_KEY = /^\d+$/;
const logitBias = z.record(
  z.string().regex(TOKEN_ID_KEY),
  z.number().min(-100).max(100),
  {
    error: (iss) =>
      iss.code === 'invalid_key' ? 'logit_bias keys must be token ids (non-negative integer strings)' : undefined,
  },
);

const stop = z.union([z.string(), z.array(z.string()).max(4)], {
  error: 'stop must be a string or an array of at most 4 strings',
});

const streamOptions = z.looseObject({ include_usage: z.boolean().optional() });

// ---------------------------------------------------------------------------------------------
// POST /v1/chat/completions
// ---------------------------------------------------------------------------------------------

export const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

const messageContent = z.union([z.string(), z.array(z.unknown()), z.null()], {
  error: 'content must be a string, an array of content parts, or null',
});

export const ChatMessage = z
  .looseObject({
    role: z.enum(MESSAGE_ROLES),
    content: messageContent.optional(),
    tool_call_id: z.string().optional(),
  })
  // A check on the payload, not superRefine: that attaches and deletes an addIssue closure on every
  // message's payload (a dictionary-mode object per message, on the hot path).
  .check((payload) => {
    const m = payload.value;
    if (m.content === undefined) {
      const hasCalls = m.role === 'assistant' && (m.tool_calls != null || m.function_call != null);
      if (!hasCalls) {
        payload.issues.push({
          code: 'invalid_type',
          expected: 'string',
          path: ['content'],
          input: undefined,
          continue: true,
          message:
            m.role === 'assistant'
              ? 'content is required for an assistant message without tool_calls or function_call'
              : `content is required for a ${m.role} message`,
        });
      }
    }
    if (m.role === 'tool' && m.tool_call_id === undefined) {
      payload.issues.push({
        code: 'invalid_type',
        expected: 'string',
        path: ['tool_call_id'],
        input: undefined,
        continue: true,
        message: 'tool_call_id is required for a tool message',
      });
    }
  });
export type ChatMessage = z.infer<typeof ChatMessage>;

export const ChatCompletionBody = z
  .looseObject(
    {
      model: z.string().min(1),
      messages: z.array(ChatMessage).min(1),
      temperature: temperature.nullable().optional(),
      top_p: topP.nullable().optional(),
      frequency_penalty: penalty.nullable().optional(),
      presence_penalty: penalty.nullable().optional(),
      n: nChoices.nullable().optional(),
      max_tokens: nonNegInt.nullable().optional(),
      max_completion_tokens: nonNegInt.nullable().optional(),
      logprobs: z.boolean().nullable().optional(),
      top_logprobs: z.int().min(0).max(20).nullable().optional(),
      stop: stop.nullable().optional(),
      logit_bias: logitBias.nullable().optional(),
      seed: seed.nullable().optional(),
      stream: z.boolean().nullable().optional(),
      stream_options: streamOptions.nullable().optional(),
      user: z.string().optional(),
      tools: z.array(z.looseObject({})).optional(),
      tool_choice: z
        .union([z.string(), z.looseObject({})], { error: 'tool_choice must be a string or an object' })
        .optional(),
      response_format: z.looseObject({ type: z.string() }).optional(),
    },
    { error: bodyObjectError },
  )
  .check(streamOptionsCheck());
export type ChatCompletionBody = z.infer<typeof ChatCompletionBody>;

// ---------------------------------------------------------------------------------------------
// POST /v1/completions (legacy) — every limit of OpenAI's completions request
// ---------------------------------------------------------------------------------------------

export const CompletionBody = z
  .looseObject(
    {
      model: z.string().min(1),
      // OpenAI's schema marks prompt nullable (null = the end-of-text default); the key is required.
      prompt: tokenInput('prompt', false).nullable(),
      best_of: z.int().min(0).max(20).nullable().optional(),
      echo: z.boolean().nullable().optional(),
      frequency_penalty: penalty.nullable().optional(),
      logit_bias: logitBias.nullable().optional(),
      logprobs: z.int().min(0).max(5).nullable().optional(),
      max_tokens: nonNegInt.nullable().optional(),
      n: nChoices.nullable().optional(),
      presence_penalty: penalty.nullable().optional(),
      seed: seed.nullable().optional(),
      stop: stop.nullable().optional(),
      stream: z.boolean().nullable().optional(),
      stream_options: streamOptions.nullable().optional(),
      suffix: z.string().nullable().optional(),
      temperature: temperature.nullable().optional(),
      top_p: topP.nullable().optional(),
      user: z.string().optional(),
    },
    { error: bodyObjectError },
  )
  .check(
    z.core._check<{ best_of?: number | null; n?: number | null; stream?: boolean | null }>(
      (ctx) => {
        const b = ctx.value;
        if (b.best_of != null && b.n != null && b.best_of <= b.n) {
          pushIssue(ctx, ['best_of'], `best_of (${b.best_of}) must be greater than n (${b.n})`, b.best_of);
        }
        // best_of 0/1 means one candidate per choice, which streams fine (and clients send it as a default).
        if (b.best_of != null && b.best_of > 1 && b.stream === true) {
          pushIssue(ctx, ['best_of'], 'best_of cannot be used with stream: true', b.best_of);
        }
      },
      { when: whenFieldsValid('best_of', 'n', 'stream') },
    ),
  )
  .check(streamOptionsCheck());
export type CompletionBody = z.infer<typeof CompletionBody>;

// ---------------------------------------------------------------------------------------------
// POST /v1/embeddings
// ---------------------------------------------------------------------------------------------

export const EmbeddingsBody = z.looseObject(
  {
    model: z.string().min(1),
    input: tokenInput('input', true),
    encoding_format: z.enum(['float', 'base64']).optional(),
    dimensions: z.int().min(1).optional(),
    user: z.string().optional(),
  },
  { error: bodyObjectError },
);
export type EmbeddingsBody = z.infer<typeof EmbeddingsBody>;

// ---------------------------------------------------------------------------------------------
// Entry point
// ---------------------------------------------------------------------------------------------

export type BodyEndpoint = 'chat' | 'completions' | 'embeddings';

export interface BodyFor {
  chat: ChatCompletionBody;
  completions: CompletionBody;
  embeddings: EmbeddingsBody;
}

export const BODY_SCHEMAS = {
  chat: ChatCompletionBody,
  completions: CompletionBody,
  embeddings: EmbeddingsBody,
} as const satisfies Record<BodyEndpoint, z.ZodType>;

/**
 * Validates a parsed JSON request body for `endpoint`. Returns the body with unknown fields intact,
 * or throws a 400 `invalid_request_body` GatewayError naming the first bad field.
 */
export function parseBody<E extends BodyEndpoint>(endpoint: E, body: unknown): BodyFor[E] {
  const schema: z.ZodType = BODY_SCHEMAS[endpoint];
  return parseOrThrow(schema, body, 'invalid_request_body', 'request body') as BodyFor[E];
}
